method Helper(x: int) returns (r: int)
  ensures r == x
{
  r := x;
}

method Target(x: int) returns (r: int)
  ensures r == x
