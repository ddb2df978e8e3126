"""The program semantic inequivalence game (SInQ).

Alice (the generator) receives a source program P and writes a variant Q that
differs from P on at least one input, together with such an input. Bob (the
evaluator) receives P and Q and must find an input on which they differ.

* ``prompts``  - system prompts and user-message layouts for both players.
* ``parse``    - turns raw model output into checked, normalised fields; never raises
  on model output, every rejection carries a stable reason code.
* ``examples`` - SFT records in the conversational prompt/completion format.
"""
