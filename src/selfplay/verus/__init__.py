"""Verus (Rust + Verus) for the PSV track: reading specs and solutions, screening
solutions for escape hatches, the spec-check files, and running Verus confined.

A back-end of the shared verifier front-end (:mod:`selfplay.specverify`), as
:mod:`selfplay.dafny` is, so the PSV track can swap verifiers by config:
:func:`selfplay.verus.checks.check_specs` and
:func:`selfplay.verus.checks.verify_solutions` are the front-end's flow and return
records of the same shapes as their Dafny namesakes.
"""
