predicate IsMax(m: int, s: seq<int>)
{
  m in s && forall k :: 0 <= k < |s| ==> s[k] <= m
}

method Max(a: array<int>) returns (m: int)
  requires a.Length > 0
  ensures IsMax(m, a[..])
{
  m := a[0];
  var i := 1;
  while i < a.Length
    invariant 1 <= i <= a.Length
    invariant m in a[..i]
    invariant forall k {:trigger a[k]} :: 0 <= k < i ==> a[k] <= m
  {
    if a[i] > m {
      m := a[i];
    }
    i := i + 1;
  }
  assert a[..] == a[..a.Length];
}
