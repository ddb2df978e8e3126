method DivMod(n: int, d: int) returns (q: int, r: int)
  requires n >= 0 && d > 0
  ensures n == q * d + r
  ensures 0 <= r < d
{
  q := 0;
  r := n;
  while r >= d
    invariant n == q * d + r
    invariant 0 <= r
    decreases r
  {
    q := q + 1;
    r := r - d;
  }
}
