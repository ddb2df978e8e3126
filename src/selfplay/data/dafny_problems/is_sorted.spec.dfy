predicate Sorted(s: seq<int>)
{
  forall i, j :: 0 <= i < j < |s| ==> s[i] <= s[j]
}

method IsSorted(a: array<int>) returns (r: bool)
  ensures r == Sorted(a[..])
