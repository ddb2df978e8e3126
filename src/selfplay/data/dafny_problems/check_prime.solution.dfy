predicate IsPrime(n: nat)
{
  n >= 2 && forall d :: 2 <= d < n ==> n % d != 0
}

method CheckPrime(n: nat) returns (r: bool)
  ensures r <==> IsPrime(n)
{
  if n < 2 {
    return false;
  }
  var d := 2;
  while d < n
    invariant 2 <= d <= n
    invariant forall k :: 2 <= k < d ==> n % k != 0
  {
    if n % d == 0 {
      return false;
    }
    d := d + 1;
  }
  r := true;
}
