method FirstNegative(a: array<int>) returns (idx: int)
  ensures 0 <= idx <= a.Length
  ensures idx < a.Length ==> a[idx] < 0
  ensures forall k :: 0 <= k < idx ==> a[k] >= 0
