method A(x: int) returns (r: int)
  ensures r == x

method B(x: int) returns (r: int)
  ensures r == x
