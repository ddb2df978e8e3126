method Loop(x: int) returns (r: int)
  decreases *
  ensures r == x + 1
