
/*
### ID
HumanEval/0
*/

/*
### VERUS BEGIN
*/
use vstd::prelude::*;

verus! {

spec fn spec_max(a: int, b: int) -> int {
    if a >= b { a } else { b }
}

fn max_of(a: i32, b: i32) -> (m: i32)
    ensures
        m == spec_max(a as int, b as int),
{
    if a >= b { a } else { b } // REFERENCE-BODY-T0
}

fn check_max(a: i32)
    ensures
        true,
{
    let _ = max_of(a, a); // REFERENCE-BODY-T0-AFTER
}

} // verus!

fn main() {}

/*
### VERUS END
*/

/*
### PROMPT

def max_of(x):
    """ Made-up prompt for a test. """

*/

/*
### ENTRY POINT
max_of
*/

/*
### CANONICAL SOLUTION
    return max(a, b)  # PYTHON-SOLUTION-T0

*/

/*
### TEST

def check(candidate):
    assert candidate(1) == 1

*/
