method IsPalindrome(s: seq<int>) returns (r: bool)
  ensures r <==> forall k :: 0 <= k < |s| ==> s[k] == s[|s| - 1 - k]
