"""GASP track (paper 004): guided asymmetric self-play. Per global iteration a teacher,
shown a hard real problem (a goalpost), writes an easier variant (the lemma phase),
then, seeing only an accepted lemma, a harder one (the lift phase); the student's pass
rate over N tries decides acceptance and the teacher's reward (``rewards``), novelty
against the global buffers rejects near-copies (``novelty``), each phase runs until M
are accepted or its attempts are spent (``phase_loop``), and the student then trains on
the accepted lemmas and lifts as induction, deduction and abduction tasks. One concept
per module; the game logic here needs no model and no sandbox.
"""
