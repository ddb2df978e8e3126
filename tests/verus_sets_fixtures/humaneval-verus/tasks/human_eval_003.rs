
/*
### ID
HumanEval/3
*/

/*
### VERUS BEGIN
*/
use vstd::prelude::*;

verus! {

spec fn sq_sum(n: nat) -> nat
    decreases n,
{
    if n == 0 { 0 } else { n * n + sq_sum((n - 1) as nat) }
}

proof fn sq_sum_mono(n: nat)
    ensures
        sq_sum(n) >= n,
    decreases n,
{
    if n > 0 { sq_sum_mono((n - 1) as nat); } // helper proof
}

fn sum_squares_impl(n: u8) -> (r: u64)
    ensures
        r == sq_sum(n as nat),
{
    let mut r: u64 = 0; // REFERENCE-BODY-T3
    r
}

proof fn later_lemma()
    ensures
        sq_sum(0) == 0,
{
}

} // verus!
fn main() {}

/*
### VERUS END
*/

/*
### PROMPT

def sum_squares(x):
    """ Made-up prompt for a test. """

*/

/*
### ENTRY POINT
sum_squares
*/

/*
### CANONICAL SOLUTION
    return None

*/

/*
### TEST

def check(candidate):
    assert candidate(1) == 1

*/
