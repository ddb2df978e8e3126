predicate Small(x: int)
{
  x < 3
}

method Scale(x: int) returns (r: int)
  requires Small(x) && x > 5
  ensures r == x + 1
