function Sum(s: seq<int>): int
{
  if |s| == 0 then 0 else Sum(s[..|s| - 1]) + s[|s| - 1]
}

method PrefixSums(a: array<int>) returns (b: array<int>)
  ensures fresh(b)
  ensures b.Length == a.Length + 1
  ensures forall k :: 0 <= k <= a.Length ==> b[k] == Sum(a[..k])
{
  b := new int[a.Length + 1];
  b[0] := 0;
  var i := 0;
  while i < a.Length
    invariant 0 <= i <= a.Length
    invariant forall k :: 0 <= k <= i ==> b[k] == Sum(a[..k])
  {
    assert a[..i + 1][..i] == a[..i];
    b[i + 1] := b[i] + a[i];
    i := i + 1;
  }
}
