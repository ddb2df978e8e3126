use vstd::prelude::*;

verus! {

fn broken(x: u32) -> (r: u32)
    ensures
        r == (x + 1,
{
