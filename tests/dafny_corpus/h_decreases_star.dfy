method Spin(x: int) returns (r: int)
  ensures r == Abs(x)
  decreases *
{
  r := 0;
  while true
    decreases *
  {
  }
}

// The absolute value of an integer.
function Abs(x: int): int
{
  if x < 0 then -x else x
}

method AbsMethod(x: int) returns (r: int)
  ensures r == Abs(x)
  ensures r >= 0
{
  r := Spin(x);
}
