use vstd::prelude::*;

verus! {

// The largest element of a non-empty vector.
spec fn is_upper_bound(s: Seq<i32>, m: i32) -> bool {
    forall|i: int| 0 <= i < s.len() ==> #[trigger] s[i] <= m
}

fn max_element(a: &Vec<i32>) -> (max: i32)
    requires
        a.len() > 0,
    ensures
        is_upper_bound(a@, max),
        exists|i: int| 0 <= i < a.len() && a[i] == max,
{
