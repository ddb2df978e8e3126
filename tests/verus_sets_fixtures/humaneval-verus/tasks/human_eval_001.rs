
/*
### ID
HumanEval/1
*/

/*
### VERUS BEGIN
*/
use vstd::prelude::*;

verus! {

 

} // verus!

fn main() {}

/*
### VERUS END
*/

/*
### PROMPT

def unfinished(x):
    """ Made-up prompt for a test. """

*/

/*
### ENTRY POINT
unfinished
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
