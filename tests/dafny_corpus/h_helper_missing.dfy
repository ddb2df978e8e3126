method AbsMethod(x: int) returns (r: int)
  ensures r == Abs(x)
  ensures r >= 0
{
  if x < 0 { r := -x; } else { r := x; }
}
