method DivMod(n: int, d: int) returns (q: int, r: int)
  requires n >= 0 && d > 0
  ensures n == q * d + r
  ensures 0 <= r < d
