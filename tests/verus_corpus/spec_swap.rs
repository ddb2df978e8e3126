use vstd::prelude::*;

verus! {

fn swap_values(a: &mut i32, b: &mut i32)
    ensures
        *a == *old(b),
        *b == *old(a),
{
