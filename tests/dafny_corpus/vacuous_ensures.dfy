method Anything(x: int) returns (r: int)
  ensures r >= x || r < x
