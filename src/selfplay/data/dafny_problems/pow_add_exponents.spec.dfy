function Pow(b: int, e: nat): int
{
  if e == 0 then 1 else b * Pow(b, e - 1)
}

method PowerOfSum(b: int, m: nat, n: nat) returns (p: int)
  ensures p == Pow(b, m + n)
  ensures p == Pow(b, m) * Pow(b, n)
