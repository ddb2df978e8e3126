predicate IsMax(m: int, s: seq<int>)
{
  m in s && forall k :: 0 <= k < |s| ==> s[k] <= m
}

method Max(a: array<int>) returns (m: int)
  requires a.Length > 0
  ensures IsMax(m, a[..])
