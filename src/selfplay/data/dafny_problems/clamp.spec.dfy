method Clamp(x: int, lo: int, hi: int) returns (r: int)
  requires lo <= hi
  ensures lo <= r <= hi
  ensures x < lo ==> r == lo
  ensures x > hi ==> r == hi
  ensures lo <= x <= hi ==> r == x
