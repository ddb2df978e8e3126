method Negate(x: int) returns (y: int)
  ensures y == -x
{
  y := 0 - x;
}
