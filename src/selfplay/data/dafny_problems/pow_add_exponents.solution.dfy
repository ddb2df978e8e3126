function Pow(b: int, e: nat): int
{
  if e == 0 then 1 else b * Pow(b, e - 1)
}

method PowerOfSum(b: int, m: nat, n: nat) returns (p: int)
  ensures p == Pow(b, m + n)
  ensures p == Pow(b, m) * Pow(b, n)
{
  p := 1;
  var i := 0;
  while i < m + n
    invariant 0 <= i <= m + n
    invariant p == Pow(b, i)
  {
    p := p * b;
    i := i + 1;
  }
  PowAdd(b, m, n);
}

lemma PowAdd(b: int, m: nat, n: nat)
  ensures Pow(b, m + n) == Pow(b, m) * Pow(b, n)
  decreases m
{
  if m > 0 {
    PowAdd(b, m - 1, n);
    calc {
      Pow(b, m + n);
    ==
      b * Pow(b, m - 1 + n);
    ==
      b * (Pow(b, m - 1) * Pow(b, n));
    ==
      (b * Pow(b, m - 1)) * Pow(b, n);
    ==
      Pow(b, m) * Pow(b, n);
    }
  }
}
