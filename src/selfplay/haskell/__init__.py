"""Haskell program handling for the Haskell track (OpInstruct-HSx style data and games).

* ``types``     - a small AST for Haskell types, a parser for type expressions and
  signatures' contexts, rendering back to source text, and instantiation of type
  variables to concrete types.
* ``signature`` - finding a function's top-level type signature in a program text and
  renaming a top-level function.
* ``literals``  - seeded generation of type-correct Haskell literals, call expressions,
  and parsing/validation of argument literals written by a model.
* ``ghc_check`` - fast, isolated compile-and-run checks: one confined GHC build per
  batch, one sandboxed process per check.
* ``divergence`` - what counts as P and Q behaving differently on an input.
* ``answers``   - reading the Haskell code out of a model's answer (fences, the
  reasoning before ``</think>``, module headers), for the track and the benchmarks.
* ``liquid``    - Liquid Haskell proofs: parsing, file assembly, the exact-equivalence
  statement check, escape-hatch refusal, running the checker and its verdicts.
"""
