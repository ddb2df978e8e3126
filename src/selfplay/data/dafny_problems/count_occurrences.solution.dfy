function Count(s: seq<int>, x: int): nat
{
  if |s| == 0 then 0
  else Count(s[..|s| - 1], x) + (if s[|s| - 1] == x then 1 else 0)
}

method CountOccurrences(a: array<int>, x: int) returns (c: nat)
  ensures c == Count(a[..], x)
{
  c := 0;
  var i := 0;
  while i < a.Length
    invariant 0 <= i <= a.Length
    invariant c == Count(a[..i], x)
  {
    assert a[..i + 1][..i] == a[..i];
    if a[i] == x {
      c := c + 1;
    }
    i := i + 1;
  }
  assert a[..a.Length] == a[..];
}
