function Pow(b: int, e: nat): int
{
  if e == 0 then 1 else b * Pow(b, e - 1)
}

method Power(b: int, e: nat) returns (p: int)
  ensures p == Pow(b, e)
{
  p := 1;
  var i := 0;
  while i < e
    invariant 0 <= i <= e
    invariant p == Pow(b, i)
  {
    p := p * b;
    i := i + 1;
  }
}
