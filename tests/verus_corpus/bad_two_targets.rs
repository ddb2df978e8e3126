use vstd::prelude::*;

verus! {

fn first(x: u32) -> (r: u32)
    ensures
        r == x;

fn second(x: u32) -> (r: u32)
    ensures
        r == x,
{
