method Midpoint(lo: int, hi: int) returns (m: int)
  requires lo <= hi
  ensures lo <= m <= hi
  ensures hi - m == m - lo || hi - m == m - lo + 1
{
  m := lo + (hi - lo) / 2;
}
