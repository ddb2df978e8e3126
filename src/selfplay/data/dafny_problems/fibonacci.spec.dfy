function Fib(n: nat): nat
{
  if n < 2 then n else Fib(n - 1) + Fib(n - 2)
}

method ComputeFib(n: nat) returns (f: nat)
  ensures f == Fib(n)
