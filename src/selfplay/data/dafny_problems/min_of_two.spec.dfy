method MinOfTwo(a: int, b: int) returns (m: int)
  ensures m <= a && m <= b
  ensures m == a || m == b
