method IncrementAt(a: array<int>, i: int)
  requires 0 <= i < a.Length
  modifies a
  ensures a[i] == old(a[i]) + 1
  ensures forall k :: 0 <= k < a.Length && k != i ==> a[k] == old(a[k])
