use vstd::prelude::*;

spec fn outside_helper(x: int) -> bool { x > 0 }

verus! {

fn positive(x: i32) -> (r: bool)
    ensures
        r == (x > 0),
{
