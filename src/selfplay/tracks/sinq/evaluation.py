"""Paper 001's extrinsic evaluation (Section 3.4): which benchmarks make each table.

The columns come from ``sinq.benchmarks``: the models (the paper compares the base
model with the trained Bob) and each benchmark's modes (greedy, majority of 9, CoT).
"""

TABLES = {
    "table2": {
        "title": "SInQ Table 2: Python builtin identifier swap (accuracy)",
        "benchmarks": ["identifier_swap"],
        "metric": "accuracy",
    },
    "table3": {
        "title": "SInQ Table 3: vulnerability detection (accuracy)",
        "benchmarks": ["pysecdb", "codexglue"],
        "metric": "accuracy",
    },
    "table4": {
        "title": "SInQ Table 4: EvalPlus pass@1",
        "benchmarks": ["mbpp", "mbpp_plus", "humaneval", "humaneval_plus"],
        "metric": "pass@1",
    },
}
# Figure 3 is Table 2 as bars.
FIGURE3 = {
    "title": "SInQ Figure 3: Python builtin identifier swap",
    "benchmark": "identifier_swap",
    "metric": "accuracy",
}
# Figure 4 (App. D): the identifier swap with models served elsewhere
# (sinq.benchmarks.other_models), next to the base model and the trained Bob.
FIGURE4 = {
    "title": "SInQ Figure 4: identifier swap, other models",
    "benchmark": "identifier_swap",
    "metric": "accuracy",
}
