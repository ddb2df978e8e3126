function Oracle(x: int): int
  ensures Oracle(x) > x

method UseOracle(x: int) returns (r: int)
  ensures r == Oracle(x)
