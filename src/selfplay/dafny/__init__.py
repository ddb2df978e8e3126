"""Dafny for the PSV track, a back-end of the shared verifier front-end
(:mod:`selfplay.specverify`): reading Dafny 2.3 text (``source``), its escape hatches
and spec rules (``screen``), the check files (``spec_files``), running the Dafny 2.3
verifier on many programs at once (``runner``), and the two verdicts (``checks``)."""
