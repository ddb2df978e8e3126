method LinearSearch(a: array<int>, x: int) returns (idx: int)
  ensures -1 <= idx < a.Length
  ensures idx >= 0 ==> a[idx] == x && forall k :: 0 <= k < idx ==> a[k] != x
  ensures idx == -1 ==> forall k :: 0 <= k < a.Length ==> a[k] != x
