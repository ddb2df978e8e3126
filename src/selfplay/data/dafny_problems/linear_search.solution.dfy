method LinearSearch(a: array<int>, x: int) returns (idx: int)
  ensures -1 <= idx < a.Length
  ensures idx >= 0 ==> a[idx] == x && forall k :: 0 <= k < idx ==> a[k] != x
  ensures idx == -1 ==> forall k :: 0 <= k < a.Length ==> a[k] != x
{
  var i := 0;
  while i < a.Length
    invariant 0 <= i <= a.Length
    invariant forall k :: 0 <= k < i ==> a[k] != x
  {
    if a[i] == x {
      return i;
    }
    i := i + 1;
  }
  idx := -1;
}
