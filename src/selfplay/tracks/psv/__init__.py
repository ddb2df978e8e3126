"""Propose, Solve, Verify (PSV, paper 003): a solver writes verified implementations of
formal specs, a sound verifier (Dafny here, Verus on clusters) decides, the solver is
trained by rejection fine-tuning on its own verified solutions, and a proposer, shown
pool problems labelled by the solver's pass rates, writes new specs at a target
difficulty.

* ``prompts``    - the solver's one-shot prompt and the proposer's prompt (our wording,
  the paper's layout: Appendix A and G).
* ``formats``    - the answers' skeletons for format-constrained decoding.
* ``parse``      - model output -> a solution text or a spec text, with reason codes.
* ``verifier``   - the configured verifier (dafny | verus) behind one interface.
* ``difficulty`` - pass rates and the four difficulty classes.
* ``proposer``   - example sampling, target classes, de-duplication, content ids.
* ``methods``    - PSV and its baselines and ablations as named loop settings.
* ``game``       - the generation requests, with their seeds.
"""
