method IsPalindrome(s: seq<int>) returns (r: bool)
  ensures r <==> forall k :: 0 <= k < |s| ==> s[k] == s[|s| - 1 - k]
{
  var i := 0;
  while i < |s| / 2
    invariant 0 <= i <= |s| / 2
    invariant forall k :: 0 <= k < i ==> s[k] == s[|s| - 1 - k]
  {
    if s[i] != s[|s| - 1 - i] {
      return false;
    }
    i := i + 1;
  }
  r := true;
}
