"""EvolveCoder track (paper 002)."""
