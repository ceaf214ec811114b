"""The values a Tune search domain can give, as the checks before Ray test them: a
searched or explored value that fails only fails its trial, once Ray runs (or, where it
names an option, trains another thing without a word)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ray.tune.search.sample import Categorical, Float, Integer

from rlsuite.experiment import PB2, PBT, Scheduler


def candidates(domain: Any) -> Iterable[Any]:
    """A grid's values, a choice's categories, a range's ends; a constant itself."""
    if isinstance(domain, Mapping) and "grid_search" in domain:
        return list(domain["grid_search"])
    if isinstance(domain, Categorical):
        return list(domain.categories)
    if isinstance(domain, Float):  # uniform draws below its upper end, never at it
        below = None if domain.upper is None else math.nextafter(domain.upper, -math.inf)
        ends = (domain.lower, below)
        return [v for v in ends if v is not None and math.isfinite(v)]
    if isinstance(domain, Integer):
        return [domain.lower, domain.upper - 1]
    if isinstance(domain, Mapping | list | tuple | str | int | float | bool):
        return [domain]  # a constant
    return []  # a sample_from function: nothing to check before it runs


def mutation_domains(scheduler: Scheduler | None) -> dict[str, Any]:
    """PBT's mutations and PB2's bounds as search domains (a list is PBT's choice)."""
    if isinstance(scheduler, PBT):
        return {
            key: {"grid_search": list(value)} if isinstance(value, list | tuple) else value
            for key, value in scheduler.hyperparam_mutations.items()
        }
    if isinstance(scheduler, PB2):
        return {k: {"grid_search": list(v)} for k, v in scheduler.hyperparam_bounds.items()}
    return {}
