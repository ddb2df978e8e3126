method Free(x: int) returns (r: int)
  requires x > 0
