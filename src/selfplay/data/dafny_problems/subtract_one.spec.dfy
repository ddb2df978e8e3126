method SubtractOne(x: int) returns (y: int)
  ensures y == x - 1
