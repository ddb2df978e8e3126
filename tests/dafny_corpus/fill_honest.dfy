method Fill(a: array<int>, v: int)
  modifies a
  ensures forall i :: 0 <= i < a.Length ==> a[i] == v
{
  forall i | 0 <= i < a.Length {
    a[i] := v;
  }
}
