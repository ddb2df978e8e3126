method Sign(x: int) returns (s: int)
  ensures x > 0 ==> s == 1
  ensures x == 0 ==> s == 0
  ensures x < 0 ==> s == -1
{
  if x > 0 {
    s := 1;
  } else if x == 0 {
    s := 0;
  } else {
    s := -1;
  }
}
