function Weird(x: int): int
{
  assume x > 0; x
}

method UseWeird(x: int) returns (r: int)
  ensures r == Weird(x)
