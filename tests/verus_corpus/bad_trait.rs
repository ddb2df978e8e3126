use vstd::prelude::*;

verus! {

trait Shape {
    fn area(&self) -> u64;
}

fn total(x: u64) -> (r: u64)
    ensures
        r == x,
{
