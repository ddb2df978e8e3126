function Count(s: seq<int>, x: int): nat
{
  if |s| == 0 then 0
  else Count(s[..|s| - 1], x) + (if s[|s| - 1] == x then 1 else 0)
}

method CountOccurrences(a: array<int>, x: int) returns (c: nat)
  ensures c == Count(a[..], x)
