method Pick(x: int) returns (r: int)
  requires x > 0
  requires x < 0
  ensures r == x * 2
