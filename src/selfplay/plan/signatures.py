"""Read each rule function's signature once, not once per job.

Snakemake 9 decides which arguments an input, params, log or resource function takes
(``wildcards``, ``input``, ``attempt``, ...) by calling ``inspect.signature`` on it every
time it evaluates it for a job: about 30 us a call, some 20 calls a job. On the GASP paper
config (17,369 jobs) that was a fifth of the dry run's DAG building. Snakemake looks for a
signature stored on the function first (``snakemake.common.overwrite_function_params``,
its hook for wrapped functions); this stores each function's own parameters there, so what
Snakemake passes is unchanged and only the repeated inspection goes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def rule_functions(rule: Any) -> Iterator[Callable]:
    """The functions a Snakemake rule evaluates per job: its input, params and log items
    and the callables behind its resources."""
    for container in (rule.input, rule.params, rule.log):
        yield from (item for item in container if callable(item))
    for resource in (rule.resources or {}).values():
        evaluator = getattr(resource, "_evaluator", None)
        if callable(evaluator):
            yield evaluator


def cache_signatures(rules: Iterable[Any]) -> int:
    """Store each rule function's parameters where Snakemake reads them first; return how
    many functions were given theirs. A function that takes no attribute (a builtin, a
    bound method) or has no signature is left to Snakemake's own inspection."""
    from snakemake.common import FUNC_OVERWRITE_PARAMS_ATTR, overwrite_function_params

    done = 0
    for rule in rules:
        for func in rule_functions(rule):
            if hasattr(func, FUNC_OVERWRITE_PARAMS_ATTR):
                continue
            try:
                overwrite_function_params(func, inspect.signature(func).parameters)
            except (AttributeError, TypeError, ValueError):
                continue
            done += 1
    return done
