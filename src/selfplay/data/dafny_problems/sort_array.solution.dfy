predicate Sorted(s: seq<int>)
{
  forall i, j :: 0 <= i < j < |s| ==> s[i] <= s[j]
}

method SortArray(a: array<int>)
  modifies a
  ensures Sorted(a[..])
  ensures multiset(a[..]) == multiset(old(a[..]))
{
  var i := 0;
  while i < a.Length
    invariant 0 <= i <= a.Length
    invariant forall p, q :: 0 <= p < q < i ==> a[p] <= a[q]
    invariant forall p, q :: 0 <= p < i <= q < a.Length ==> a[p] <= a[q]
    invariant multiset(a[..]) == multiset(old(a[..]))
  {
    var m := i;
    var j := i + 1;
    while j < a.Length
      invariant i <= m < a.Length
      invariant i + 1 <= j <= a.Length
      invariant forall k :: i <= k < j ==> a[m] <= a[k]
    {
      if a[j] < a[m] {
        m := j;
      }
      j := j + 1;
    }
    a[i], a[m] := a[m], a[i];
    i := i + 1;
  }
}
