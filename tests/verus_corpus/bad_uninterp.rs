use vstd::prelude::*;

verus! {

uninterp spec fn mystery(x: int) -> int;

fn apply(x: i32) -> (r: i32)
    ensures
        r == mystery(x as int),
{
