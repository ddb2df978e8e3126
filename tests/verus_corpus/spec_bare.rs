// A spec written without the usual preamble: its items are read as if inside verus! { }.
spec fn triple_spec(x: int) -> int { 3 * x }

fn triple(x: u32) -> (r: u64)
    ensures r == triple_spec(x as int)
{
