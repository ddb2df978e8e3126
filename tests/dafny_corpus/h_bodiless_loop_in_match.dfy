datatype Choice = Left | Right

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
  var c := Left;
  match c {
    case Left => while r < 1 invariant r <= 0
    case Right => if true { r := if x < 0 then -x else x; }
  }
}
