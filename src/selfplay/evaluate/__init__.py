"""The shared benchmark layer: adapters (``benchmarks/``, listed in ``registry``), sampling
modes, host-side judging of model-written code, and the per-benchmark metrics."""
