predicate IsPrime(n: nat)
{
  n >= 2 && forall d :: 2 <= d < n ==> n % d != 0
}

method CheckPrime(n: nat) returns (r: bool)
  ensures r <==> IsPrime(n)
