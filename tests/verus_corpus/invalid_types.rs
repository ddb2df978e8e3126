use vstd::prelude::*;

verus! {

// FAKE_VERUS_VALIDITY: syntax_error  (the test double plays rustc refusing the ensures)
fn bad_types(x: u32) -> (r: bool)
    ensures
        r + 1 == x,
{
