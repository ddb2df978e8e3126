use vstd::prelude::*;

verus! {

proof fn lemma_square(x: int)
    ensures
        x * x >= 0,
{
