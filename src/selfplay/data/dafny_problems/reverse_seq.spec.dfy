function Rev(s: seq<int>): seq<int>
{
  if |s| == 0 then [] else Rev(s[1..]) + [s[0]]
}

method ReverseSeq(s: seq<int>) returns (r: seq<int>)
  ensures r == Rev(s)
