method BinarySearch(a: array<int>, x: int) returns (idx: int)
  requires forall i, j :: 0 <= i < j < a.Length ==> a[i] <= a[j]
  ensures -1 <= idx < a.Length
  ensures idx >= 0 ==> a[idx] == x
  ensures idx == -1 ==> forall k :: 0 <= k < a.Length ==> a[k] != x
{
  var lo := 0;
  var hi := a.Length;
  while lo < hi
    invariant 0 <= lo <= hi <= a.Length
    invariant forall k :: 0 <= k < lo ==> a[k] < x
    invariant forall k :: hi <= k < a.Length ==> a[k] > x
    decreases hi - lo
  {
    var mid := lo + (hi - lo) / 2;
    if a[mid] < x {
      lo := mid + 1;
    } else if a[mid] > x {
      hi := mid;
    } else {
      return mid;
    }
  }
  idx := -1;
}
