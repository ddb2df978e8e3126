method Broken(x: int) returns (r: int)
  ensures (r == x
