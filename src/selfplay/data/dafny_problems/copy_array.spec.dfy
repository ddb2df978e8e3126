method CopyArray(a: array<int>) returns (b: array<int>)
  ensures fresh(b)
  ensures b.Length == a.Length
  ensures forall k :: 0 <= k < a.Length ==> b[k] == a[k]
