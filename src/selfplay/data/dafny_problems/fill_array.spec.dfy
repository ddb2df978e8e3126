method Fill(a: array<int>, v: int)
  modifies a
  ensures forall k :: 0 <= k < a.Length ==> a[k] == v
