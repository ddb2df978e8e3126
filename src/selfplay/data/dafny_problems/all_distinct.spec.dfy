method AllDistinct(a: array<int>) returns (r: bool)
  ensures r <==> forall i, j :: 0 <= i < j < a.Length ==> a[i] != a[j]
