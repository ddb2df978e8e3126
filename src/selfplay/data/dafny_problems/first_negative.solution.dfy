method FirstNegative(a: array<int>) returns (idx: int)
  ensures 0 <= idx <= a.Length
  ensures idx < a.Length ==> a[idx] < 0
  ensures forall k :: 0 <= k < idx ==> a[k] >= 0
{
  idx := 0;
  while idx < a.Length && a[idx] >= 0
    invariant 0 <= idx <= a.Length
    invariant forall k :: 0 <= k < idx ==> a[k] >= 0
  {
    idx := idx + 1;
  }
}
