"""Dafny for the PSV track: running the Dafny 2.3 verifier on many programs at once (``runner``)."""
