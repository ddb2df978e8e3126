use vstd::prelude::*;

verus! {

// FAKE_VERUS_POSTCONDITIONS: verified  (the test double plays Verus accepting any result)
fn anything(x: u32) -> (r: u32)
    ensures
        x == x,
{
