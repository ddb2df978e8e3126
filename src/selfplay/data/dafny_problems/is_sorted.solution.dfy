predicate Sorted(s: seq<int>)
{
  forall i, j :: 0 <= i < j < |s| ==> s[i] <= s[j]
}

method IsSorted(a: array<int>) returns (r: bool)
  ensures r == Sorted(a[..])
{
  if a.Length < 2 {
    return true;
  }
  var i := 1;
  while i < a.Length
    invariant 1 <= i <= a.Length
    invariant forall p, q :: 0 <= p < q < i ==> a[p] <= a[q]
  {
    if a[i - 1] > a[i] {
      return false;
    }
    i := i + 1;
  }
  r := true;
}
