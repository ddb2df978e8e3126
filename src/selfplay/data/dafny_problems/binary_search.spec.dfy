method BinarySearch(a: array<int>, x: int) returns (idx: int)
  requires forall i, j :: 0 <= i < j < a.Length ==> a[i] <= a[j]
  ensures -1 <= idx < a.Length
  ensures idx >= 0 ==> a[idx] == x
  ensures idx == -1 ==> forall k :: 0 <= k < a.Length ==> a[k] != x
