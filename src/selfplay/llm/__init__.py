"""Generation backends behind one interface (transformers, vllm, replay)."""
