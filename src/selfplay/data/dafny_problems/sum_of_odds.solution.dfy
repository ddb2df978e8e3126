function SumOdds(n: nat): nat
{
  if n == 0 then 0 else SumOdds(n - 1) + 2 * n - 1
}

method SquareByOdds(n: nat) returns (s: nat)
  ensures s == SumOdds(n)
  ensures s == n * n
{
  s := 0;
  var i := 0;
  while i < n
    invariant 0 <= i <= n
    invariant s == SumOdds(i)
    invariant s == i * i
  {
    i := i + 1;
    s := s + 2 * i - 1;
  }
}
