method AllPositive(a: array<int>) returns (r: bool)
  ensures r <==> forall k :: 0 <= k < a.Length ==> a[k] > 0
