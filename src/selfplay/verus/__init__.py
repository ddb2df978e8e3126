"""Verus (Rust + Verus) for the PSV track: reading specs and solutions, screening
solutions for escape hatches, the spec-check files, and running Verus confined.

The layout mirrors :mod:`selfplay.dafny`, so the PSV track can swap verifiers by
config: :func:`selfplay.verus.checks.check_specs` and
:func:`selfplay.verus.checks.verify_solutions` return records of the same shapes as
their Dafny namesakes.
"""
