function method AbsImpl(x: int): int
{
  if x < 0 then -x else x
}

lemma {:induction false} AbsAgrees(x: int)
  ensures AbsImpl(x) == Abs(x)
{
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
  AbsAgrees(x);
  r := AbsImpl(x);
}
