// Sum of the first n elements of a sequence.
function SumTo(a: seq<int>, n: nat): int
  requires n <= |a|
  decreases n
{
  if n == 0 then 0 else SumTo(a, n - 1) + a[n - 1]
}

method Sum(a: array<int>) returns (s: int)
  ensures s == SumTo(a[..], a.Length)
