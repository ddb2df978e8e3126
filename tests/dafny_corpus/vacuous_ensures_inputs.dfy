method Echo(x: int) returns (r: int)
  requires x > 0
  ensures x >= 0
