function Pow(b: int, e: nat): int
{
  if e == 0 then 1 else b * Pow(b, e - 1)
}

method Power(b: int, e: nat) returns (p: int)
  ensures p == Pow(b, e)
