// The absolute value of an integer.
function Abs(x: int): int
{
  if x < 0 then -x else x
}

method AbsMethod(x: int) returns (r: int)
  ensures r == Abs(x)
  ensures r >= 0
{
  assert Abs(0) == 0;
  forall y: int | y == 0 ensures Abs(y) == 1;
  assert false;
}
