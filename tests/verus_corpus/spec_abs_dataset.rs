use vstd::prelude::*;

verus! {

spec fn abs_spec(x: int) -> int {
    if x < 0 { -x } else { x }
}

fn abs_value(x: i32) -> (r: i32)
    requires
        x > i32::MIN,
    ensures
        r == abs_spec(x as int),
        r >= 0,
{
    if x < 0 { -x } else { x }
}

fn main() {}

} // verus!
