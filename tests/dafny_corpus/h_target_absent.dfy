// The absolute value of an integer.
function Abs(x: int): int
{
  if x < 0 then -x else x
}

method Other(x: int) returns (r: int)
  ensures r == Abs(x)
  ensures r >= 0
{
  if x < 0 { r := -x; } else { r := x; }
}
