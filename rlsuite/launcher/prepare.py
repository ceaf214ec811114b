"""From an experiment and the run's options to what runs: every check before Ray starts."""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import NamedTuple

from ray import tune

from rlsuite.errors import UsageError
from rlsuite.experiment import PB2, PBT, Experiment
from rlsuite.launcher import checks, cluster, console, resume_checks, run_dirs
from rlsuite.launcher.loader import load_experiment
from rlsuite.launcher.smoke import smoke
from rlsuite.launcher.tuner import Launch
from rlsuite.launcher.workloads import workload_for
from rlsuite.options import RunOptions
from rlsuite.search import BOHB
from rlsuite.tracking import Tracking, check_tracking, searched_keys


class Prepared(NamedTuple):
    experiment: Experiment
    """The experiment as it will run: smoke, flags and overrides applied."""
    launch: Launch
    threshold: tuple[str, float] | None
    """The `--as-test` return to reach: (metric, value)."""


def load_and_prepare(experiment: Experiment | str | Path, options: RunOptions) -> Prepared:
    """`prepare` for an Experiment or the path of an experiment file. What RLlib and the
    envs print meanwhile ("You are running SAC on the new API stack!", logged each time a
    config is copied or validated; ale-py's banner) stays off the terminal: before Ray
    starts the user sees the suite's lines, and the run's driver.log gets the rest."""
    rllib = logging.getLogger("ray.rllib")
    level = rllib.level
    rllib.setLevel(logging.ERROR)
    try:
        with console.held_output():
            if isinstance(experiment, Experiment):
                return prepare(experiment, options, "experiment")
            path = Path(experiment)
            prepared = prepare(load_experiment(path), options, path.stem)
        launch = dataclasses.replace(prepared.launch, experiment_file=path.absolute())
        return prepared._replace(launch=launch)
    finally:
        rllib.setLevel(level)


def prepare(experiment: Experiment, options: RunOptions, name: str) -> Prepared:
    """The checked experiment, where it runs, and the return `--as-test` asks for.

    `name` is the results folder's default name (the experiment file's stem)."""
    file_stop = experiment.stop
    if options.smoke:
        experiment = smoke(experiment)
    experiment = apply_flags(experiment, options)
    checks.check_storage_is_a_path(str(options.storage_path))
    launch = Launch(
        name=options.name or name,
        storage_path=Path(options.storage_path).expanduser().absolute(),
        address=options.address,
        resume=options.resume,
        max_concurrent_trials=options.max_concurrent_trials,
        overwrite=options.overwrite and not options.resume,
        verbose=options.verbose,
        progress="quiet" if options.quiet else "auto",
        tracking=Tracking(options.mlflow, options.mlflow_experiment, options.wandb),
    )
    checks.check_seeds(options.seed, options.seeds)  # before the config's own check names --set
    workload = workload_for(experiment.config)
    workload.check(experiment, launch.address)
    check_searcher(experiment)
    if launch.address:
        cluster.check_reachable(launch.address)
    else:
        needed, cpus = workload.trial_resources(experiment), os.cpu_count() or 1
        checks.check_fits_locally(needed, cpus, workload.scaling_flags)
    checks.check_checkpoint_cadence(experiment)
    checks.check_stop(experiment.stop)
    checks.check_metric(experiment.metric)
    checks.check_run_name(launch.name)
    checks.check_storage(launch.storage_path)
    check_tracking(launch.tracking)  # an MLflow server that does not answer: before Ray
    if launch.resume:
        settings = resume_checks.RunSettings.asked(
            experiment, workload, launch.max_concurrent_trials, launch.tracking, launch.name
        )
        resume_checks.check_resumable(launch.experiment_dir, settings)
        resume_checks.check_same_config(
            launch.experiment_dir, workload.param_space(experiment), searched_keys(experiment)
        )
    else:
        run_dirs.check_new_run(launch.experiment_dir, options.overwrite)
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
    # --no-search: the file's own values, as one config (a `--set` of a key the search
    # named then edits it, instead of being refused).
    search = {} if options.no_search else dict(experiment.search)
    if (options.seeds or 1) > 1 and isinstance(experiment.scheduler, PBT | PB2):
        name, first = type(experiment.scheduler).__name__, options.seed or 0
        seeds = " ".join(str(s) for s in range(first, first + (options.seeds or 1)))
        raise UsageError(
            f"--seeds {options.seeds} with {name}: every seed's trials would be one population "
            "(exploits would copy weights across seeds); run one population per seed: "
            f"for s in {seeds}; do python -m rlsuite.run FILE --seed $s --name NAME-seed$s; done"
        )
    if options.seeds:
        first = options.seed or 0
        search["seed"] = tune.grid_search(list(range(first, first + options.seeds)))
    workload = workload_for(experiment.config)
    experiment = workload.apply_flags(experiment, options)
    checks.check_sets_not_searched(options.sets, search, workload.param_keys)
    searcher = None if options.no_search else experiment.searcher
    if searcher is not None and options.seed is not None and not options.seeds:
        # A sweep's outcome depends on its searcher's draws as much as on its trials': one
        # `--seed` makes the whole sweep another sample (the benchmark's population rows
        # count on this to measure the spread between sweeps).
        searcher = dataclasses.replace(searcher, seed=options.seed)
    return dataclasses.replace(
        experiment,
        search=search,
        searcher=searcher,
        stop=checks.stops_with_budget(list(options.stops), experiment.stop),
        # --no-search: the file's own values once (copies of one config would differ in
        # nothing but their seeds' absence), unless --num-samples asks for more.
        num_samples=options.num_samples or (1 if options.no_search else experiment.num_samples),
        checkpoint_every=options.checkpoint_every or experiment.checkpoint_every,
        max_failures=experiment.max_failures
        if options.max_failures is None
        else options.max_failures,
    )


def check_searcher(experiment: Experiment) -> None:
    """A searcher with a scheduler it can work beside, a space and stop it can take."""
    searcher = experiment.searcher
    if searcher is None:
        return
    name = type(searcher).__name__
    scheduler = type(experiment.scheduler).__name__
    if isinstance(experiment.scheduler, PBT | PB2):
        raise UsageError(
            f"{name} with {scheduler}: Tune's searchers cannot follow {scheduler}'s exploits "
            "(they change a running trial's config); drop the searcher or the scheduler"
        )
    if isinstance(searcher, BOHB) and experiment.scheduler is not None:
        raise UsageError(
            f"BOHB brings its own scheduler (Tune's HyperBandForBOHB); remove scheduler="
            f"{scheduler}(...) from the experiment"
        )
    searcher.check(experiment.search, experiment.stop)
