class Cell {
  var v: int
}

method Get(c: Cell) returns (r: int)
  ensures r == c.v
