"""`--smoke`: one pure function from an experiment to a tiny CPU run of seconds.

Every experiment file becomes a CI test through it; experiment files hold no smoke
branches. The input experiment and its config are left untouched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ray import tune
from ray.tune.search.sample import Categorical

from rlsuite import metrics
from rlsuite.experiment import ASHA, PB2, PBT, Experiment, Scheduler
from rlsuite.launcher.workloads import workload_for
from rlsuite.search import smoke_searcher

ITERATIONS = 2
TRIALS = 2


def smoke(experiment: Experiment) -> Experiment:
    """The same experiment shrunk to two tiny CPU iterations per trial, at most two trials
    (supervised: two epochs of synthetic data on one CPU worker); a searcher runs them one
    at a time."""
    config = experiment.config
    search = _small_search(experiment.search)
    searcher = experiment.searcher
    return dataclasses.replace(
        experiment,
        config=workload_for(config).smoke_config(config),
        stop={metrics.TRAINING_ITERATION: ITERATIONS},
        search=search,
        scheduler=_smoke_scheduler(experiment.scheduler),
        # A searcher stays, one trial at a time: the second is suggested from the first.
        searcher=smoke_searcher(searcher, search) if searcher else None,
        num_samples=min(experiment.num_samples, TRIALS),
        checkpoint_every=1,
    )


def _small_search(search: Mapping[str, Any]) -> dict[str, Any]:
    """Grid searches cut to their first two values, choices among numbers to their two
    smallest (sizes: a minibatch above smoke's tiny train batch would be refused);
    ranges stay as they are."""
    cut = {}
    for key, value in search.items():
        if isinstance(value, dict) and "grid_search" in value:
            value = {"grid_search": list(value["grid_search"])[:TRIALS]}
        elif isinstance(value, Categorical) and all(_is_number(c) for c in value.categories):
            value = tune.choice(sorted(value.categories)[:TRIALS])
        cut[key] = value
    return cut


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _smoke_scheduler(scheduler: Scheduler | None) -> Scheduler | None:
    if isinstance(scheduler, PBT | PB2):
        # With two trials only a 0.5 quantile puts one in the bottom and one in the top.
        # Synchronous, so that an exploit happens even when one trial starts late (a busy
        # CI machine) and would otherwise finish its two iterations alone.
        return dataclasses.replace(
            scheduler,
            perturbation_interval=1,
            quantile_fraction=0.5,
            synch=True,
            time_attr=metrics.TRAINING_ITERATION,  # the cadence counts smoke iterations
        )
    if isinstance(scheduler, ASHA):
        # Every trial runs all smoke iterations: with a grace period of 1, ASHA stopped
        # whichever trial reached its first rung worse, and which did depended on timing.
        return dataclasses.replace(
            scheduler,
            max_t=ITERATIONS,
            grace_period=ITERATIONS,
            time_attr=metrics.TRAINING_ITERATION,
        )
    return scheduler
