method AllDistinct(a: array<int>) returns (r: bool)
  ensures r <==> forall i, j :: 0 <= i < j < a.Length ==> a[i] != a[j]
{
  var i := 0;
  while i < a.Length
    invariant 0 <= i <= a.Length
    invariant forall p, q :: 0 <= p < q < a.Length && p < i ==> a[p] != a[q]
  {
    var j := i + 1;
    while j < a.Length
      invariant i + 1 <= j <= a.Length
      invariant forall q :: i < q < j ==> a[i] != a[q]
    {
      if a[i] == a[j] {
        return false;
      }
      j := j + 1;
    }
    i := i + 1;
  }
  r := true;
}
