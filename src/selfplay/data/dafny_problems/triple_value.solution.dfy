method TripleValue(x: int) returns (y: int)
  ensures y == 3 * x
{
  y := x + x + x;
}
