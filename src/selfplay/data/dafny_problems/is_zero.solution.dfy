method IsZero(x: int) returns (b: bool)
  ensures b <==> x == 0
{
  b := x == 0;
}
