method First(a: array<int>) returns (r: int)
  ensures r == a[0]
