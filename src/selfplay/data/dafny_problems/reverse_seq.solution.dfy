function Rev(s: seq<int>): seq<int>
{
  if |s| == 0 then [] else Rev(s[1..]) + [s[0]]
}

method ReverseSeq(s: seq<int>) returns (r: seq<int>)
  ensures r == Rev(s)
{
  r := [];
  var i := 0;
  while i < |s|
    invariant 0 <= i <= |s|
    invariant r == Rev(s[..i])
  {
    RevAppend(s[..i], s[i]);
    assert s[..i + 1] == s[..i] + [s[i]];
    r := [s[i]] + r;
    i := i + 1;
  }
  assert s[..|s|] == s;
}

lemma RevAppend(s: seq<int>, x: int)
  ensures Rev(s + [x]) == [x] + Rev(s)
{
  if |s| > 0 {
    assert (s + [x])[1..] == s[1..] + [x];
    RevAppend(s[1..], x);
  }
}
