method Clamp(x: int, lo: int, hi: int) returns (r: int)
  requires lo <= hi
  ensures lo <= r <= hi
  ensures x < lo ==> r == lo
  ensures x > hi ==> r == hi
  ensures lo <= x <= hi ==> r == x
{
  if x < lo {
    r := lo;
  } else if x > hi {
    r := hi;
  } else {
    r := x;
  }
}
