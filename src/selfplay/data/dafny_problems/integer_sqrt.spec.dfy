method IntSqrt(n: nat) returns (r: nat)
  ensures r * r <= n < (r + 1) * (r + 1)
