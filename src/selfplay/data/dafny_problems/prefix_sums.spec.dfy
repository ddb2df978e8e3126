function Sum(s: seq<int>): int
{
  if |s| == 0 then 0 else Sum(s[..|s| - 1]) + s[|s| - 1]
}

method PrefixSums(a: array<int>) returns (b: array<int>)
  ensures fresh(b)
  ensures b.Length == a.Length + 1
  ensures forall k :: 0 <= k <= a.Length ==> b[k] == Sum(a[..k])
