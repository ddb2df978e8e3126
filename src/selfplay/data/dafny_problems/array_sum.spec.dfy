function Sum(s: seq<int>): int
{
  if |s| == 0 then 0 else Sum(s[..|s| - 1]) + s[|s| - 1]
}

method ArraySum(a: array<int>) returns (total: int)
  ensures total == Sum(a[..])
