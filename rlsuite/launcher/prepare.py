"""From an experiment and the run's options to what runs: every check before Ray starts."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import NamedTuple

from ray import tune

from rlsuite.errors import UsageError
from rlsuite.experiment import Experiment
from rlsuite.launcher import checks
from rlsuite.launcher.smoke import smoke
from rlsuite.launcher.tuner import Launch
from rlsuite.launcher.workloads import workload_for
from rlsuite.options import RunOptions


class Prepared(NamedTuple):
    experiment: Experiment
    """The experiment as it will run: smoke, flags and overrides applied."""
    launch: Launch
    threshold: tuple[str, float] | None
    """The `--as-test` return to reach: (metric, value)."""


def prepare(experiment: Experiment, options: RunOptions, name: str) -> Prepared:
    """The checked experiment, where it runs, and the return `--as-test` asks for.

    `name` is the results folder's default name (the experiment file's stem)."""
    file_stop = experiment.stop
    if options.smoke:
        experiment = smoke(experiment)
    experiment = apply_flags(experiment, options)
    launch = Launch(
        name=options.name or name,
        storage_path=Path(options.storage_path).expanduser().absolute(),
        address=options.address,
        resume=options.resume,
        max_concurrent_trials=options.max_concurrent_trials,
    )
    workload_for(experiment.config).check(experiment, launch.address)
    checks.check_checkpoint_cadence(experiment)
    checks.check_stop(experiment.stop)
    checks.check_storage(launch.storage_path)
    if launch.resume:
        checks.check_resumable(launch.experiment_dir)
    threshold = None
    if options.as_test:
        threshold = checks.return_threshold(experiment.stop) or checks.return_threshold(file_stop)
        if threshold is None:
            raise UsageError(
                "--as-test: the experiment's stop has no return to reach; add one to its `stop`"
            )
    return Prepared(experiment, launch, threshold)


def apply_flags(experiment: Experiment, options: RunOptions) -> Experiment:
    """The experiment with `--set`, scaling, seed, stop and checkpoint flags applied."""
    search = dict(experiment.search)
    if options.seeds:
        first = options.seed or 0
        search["seed"] = tune.grid_search(list(range(first, first + options.seeds)))
    experiment = workload_for(experiment.config).apply_flags(experiment, options)
    return dataclasses.replace(
        experiment,
        search=search,
        stop=checks.parse_stops(list(options.stops)) or experiment.stop,
        num_samples=options.num_samples or experiment.num_samples,
        checkpoint_every=options.checkpoint_every or experiment.checkpoint_every,
    )
