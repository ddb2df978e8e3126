method CopyArray(a: array<int>) returns (b: array<int>)
  ensures fresh(b)
  ensures b.Length == a.Length
  ensures forall k :: 0 <= k < a.Length ==> b[k] == a[k]
{
  b := new int[a.Length];
  var i := 0;
  while i < a.Length
    invariant 0 <= i <= a.Length
    invariant forall k :: 0 <= k < i ==> b[k] == a[k]
  {
    b[i] := a[i];
    i := i + 1;
  }
}
