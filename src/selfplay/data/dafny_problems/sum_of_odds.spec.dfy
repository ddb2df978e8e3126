function SumOdds(n: nat): nat
{
  if n == 0 then 0 else SumOdds(n - 1) + 2 * n - 1
}

method SquareByOdds(n: nat) returns (s: nat)
  ensures s == SumOdds(n)
  ensures s == n * n
