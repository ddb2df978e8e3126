use vstd::prelude::*;

verus! {

// FAKE_VERUS_PRECONDITIONS: verified  (the test double plays Verus proving assert(false))
fn impossible(x: u32) -> (r: u32)
    requires
        x > 5,
        x < 3,
    ensures
        r == x + 1,
{
