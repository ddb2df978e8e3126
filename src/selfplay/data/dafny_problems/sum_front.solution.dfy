function SumFront(s: seq<int>): int
{
  if |s| == 0 then 0 else s[0] + SumFront(s[1..])
}

method SumForward(s: seq<int>) returns (total: int)
  ensures total == SumFront(s)
{
  total := 0;
  var i := 0;
  while i < |s|
    invariant 0 <= i <= |s|
    invariant total == SumFront(s[..i])
  {
    SumFrontAppend(s[..i], s[i]);
    assert s[..i + 1] == s[..i] + [s[i]];
    total := total + s[i];
    i := i + 1;
  }
  assert s[..|s|] == s;
}

lemma SumFrontAppend(s: seq<int>, x: int)
  ensures SumFront(s + [x]) == SumFront(s) + x
{
  if |s| > 0 {
    assert (s + [x])[1..] == s[1..] + [x];
    SumFrontAppend(s[1..], x);
  }
}
