method MinOfThree(a: int, b: int, c: int) returns (m: int)
  ensures m <= a && m <= b && m <= c
  ensures m == a || m == b || m == c
{
  m := a;
  if b < m {
    m := b;
  }
  if c < m {
    m := c;
  }
}
