use vstd::prelude::*;

verus! {

fn double(x: u32) -> (r: u64)
    ensures
        r == 2 * x,
{
    (x as u64) * 2
}

} // verus!
