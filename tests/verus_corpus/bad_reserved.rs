use vstd::prelude::*;

verus! {

spec fn selfplay_arbitrary_value(x: int) -> int { x }

fn ident(x: u32) -> (r: u32)
    ensures
        r == x,
{
