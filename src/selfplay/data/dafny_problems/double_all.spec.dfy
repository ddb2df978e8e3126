method DoubleAll(a: array<int>)
  modifies a
  ensures forall k :: 0 <= k < a.Length ==> a[k] == 2 * old(a[k])
