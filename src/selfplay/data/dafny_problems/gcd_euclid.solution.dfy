function Gcd(a: nat, b: nat): nat
  decreases b
{
  if b == 0 then a else Gcd(b, a % b)
}

method ComputeGcd(a: nat, b: nat) returns (g: nat)
  ensures g == Gcd(a, b)
{
  var x := a;
  var y := b;
  while y != 0
    invariant Gcd(x, y) == Gcd(a, b)
    decreases y
  {
    x, y := y, x % y;
  }
  g := x;
}
