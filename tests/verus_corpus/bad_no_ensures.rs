use vstd::prelude::*;

verus! {

fn no_contract(x: u32) -> (r: u32)
    requires
        x < 10,
{
