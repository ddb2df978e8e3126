"""Haskell program handling for the Haskell track (OpInstruct-HSx style data and games).

* ``types``     - a small AST for Haskell types, a parser for type expressions and
  signatures' contexts, rendering back to source text, and instantiation of type
  variables to concrete types.
* ``signature`` - finding a function's top-level type signature in a program text and
  renaming a top-level function.
* ``literals``  - seeded generation of type-correct Haskell literals, call expressions,
  and parsing/validation of argument literals written by a model.
"""
