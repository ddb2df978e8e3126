function SumFront(s: seq<int>): int
{
  if |s| == 0 then 0 else s[0] + SumFront(s[1..])
}

method SumForward(s: seq<int>) returns (total: int)
  ensures total == SumFront(s)
