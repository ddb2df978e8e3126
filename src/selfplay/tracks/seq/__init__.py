"""The Haskell track (paper 000): semantic equivalence with Liquid Haskell proofs (SEQ)
and semantic inequivalence with GHC-executed counterexamples (SINQ), played by the
same Alice against the same Bob."""
