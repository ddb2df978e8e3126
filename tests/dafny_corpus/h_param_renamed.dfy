// The absolute value of an integer.
function Abs(x: int): int
{
  if x < 0 then -x else x
}

method AbsMethod(y: int) returns (r: int)
  ensures r == Abs(y)
  ensures r >= 0
{
  if y < 0 { r := -y; } else { r := y; }
}
