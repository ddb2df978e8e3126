method MinOfThree(a: int, b: int, c: int) returns (m: int)
  ensures m <= a && m <= b && m <= c
  ensures m == a || m == b || m == c
