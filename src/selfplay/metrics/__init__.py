"""Metrics shared by the paper tracks: pass@k from sample counts, and seed aggregation.

``passk`` turns per-problem (samples, successes) counts into pass@k; ``seeds`` reduces
per-seed results to "mean ± std" cells and decides which cell of a column is bold
(paired t-test over seeds). Values stay fractions; a table scales them if it wants %.
"""

from .passk import mean_pass_at_k, pass_at_k, pass_at_ks
from .seeds import (
    best_by_paired_test,
    format_mean_std,
    format_mean_std_markdown,
    mean_std,
    paired_t_test,
)

__all__ = [
    "best_by_paired_test",
    "format_mean_std",
    "format_mean_std_markdown",
    "mean_pass_at_k",
    "mean_std",
    "paired_t_test",
    "pass_at_k",
    "pass_at_ks",
]
