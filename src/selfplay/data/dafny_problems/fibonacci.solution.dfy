function Fib(n: nat): nat
{
  if n < 2 then n else Fib(n - 1) + Fib(n - 2)
}

method ComputeFib(n: nat) returns (f: nat)
  ensures f == Fib(n)
{
  var prev := 0;
  f := 0;
  if n == 0 {
    return;
  }
  f := 1;
  var i := 1;
  while i < n
    invariant 1 <= i <= n
    invariant f == Fib(i) && prev == Fib(i - 1)
  {
    prev, f := f, prev + f;
    i := i + 1;
  }
}
