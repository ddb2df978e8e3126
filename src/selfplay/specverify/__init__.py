"""The verifier front-end the PSV track's two verifiers share (Dafny in
:mod:`selfplay.dafny`, Verus in :mod:`selfplay.verus`).

What is the same idea for both languages lives here once; each back-end keeps what
depends on its language or its tool:

* :mod:`.lexing`: comment- and literal-aware lexing helpers (nested block comments,
  line numbers, the odd-character rule, blanking a segment);
* :mod:`.brackets`: matching ``()``, ``[]`` and ``{}`` over code tokens;
* :mod:`.problems`: the reasons a spec or solution is refused (``Problem``,
  ``Problems``, ``ScreenResult``, ``SpecError``), each back-end naming its own codes;
* :mod:`.screen`: the reading flow before a screen (size, empty text, parse), the
  comparison of a solution's copy of the spec with the spec, and the wording of a
  changed target header;
* :mod:`.spec_verdict`: how a spec's three checks combine into one verdict;
* :mod:`.checks`: ``check_specs`` and ``verify_solutions`` (batching every file of a
  call into one runner call, and the records they return) over a :class:`.checks.Backend`;
* :mod:`.runs`: what the runners share (the verdict for text no verifier should see,
  borrowing or starting a sandbox, adding up run statistics).

A back-end supplies its lexer and parser, its escape hatches, its check files, and its
runner (the command line and the reading of the tool's output).
"""
