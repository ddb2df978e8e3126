// The absolute value of an integer.
function Abs(x: int): int
{
  if x < 0 then -x else x
}

method AbsMethod(x: int) returns (r: int)
  ensures r == Abs(x)
  ensures r >= 0
{
  // No cheating here: no assume, no {:axiom}, no {:verify false}, no decreases *.
  /* Nested comment: /* assume false; */ still a comment: lemma {:axiom} L() ensures false */
  var note := "assume false; {:axiom} {:verify false} decreases * free ensures";
  var quote := '"';
  var verbatim := @"a ""quoted"" assume
  spanning lines {:extern}";
  var x' := 1;
  if x < 0 { r := -x; } else { r := x; }
}
