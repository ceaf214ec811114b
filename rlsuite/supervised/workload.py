"""The supervised workload: a `SupervisedConfig` trained by a Ray Train run per Tune trial."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ray import tune
from ray.tune import CheckpointConfig

from rlsuite.domains import candidates, mutation_domains
from rlsuite.experiment import Experiment
from rlsuite.options import RunOptions
from rlsuite.supervised import overrides, registry, room, smoke, validate
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.room import READ_CPUS

# What a supervised trial's own process reserves: it only waits on its Train run. No CPU:
# Train's elastic policy (Ray 2.60) counts each node's *total* CPUs, so a driver holding a
# sliver of one made it ask for a worker group that could never be placed (a 2-CPU node
# with max_workers=2 waited without an epoch until stopped after 240 s; Train retries such
# a group without end). A token of memory instead, as Tune refuses an empty request.
DRIVER_RESOURCES: dict[str, float] = {"memory": 1 << 20}


class SupervisedWorkload:
    name = "supervised"
    # Not RLlib's warm-up: supervised runs start many small processes (Train's controller
    # and helpers) that never use RLlib. See worker_setup for this one.
    worker_setup_hook = "rlsuite.supervised.worker_setup.pin_ray_address"
    # --num-env-runners and its kin are refused here (overrides.RL_ONLY_FLAGS).
    scaling_flags = (
        "--num-learners, --num-cpus-per-learner or --num-gpus-per-learner "
        "(num_workers, cpus_per_worker, use_gpu)"
    )

    def apply_flags(self, experiment: Experiment, options: RunOptions) -> Experiment:
        config = overrides.apply_sets(_config(experiment), list(options.sets))
        config = overrides.apply_scaling(config, options)
        config = _absolute_paths(config)
        if options.seed is not None and not options.seeds:
            config = config.replace(seed=options.seed)
        return dataclasses.replace(experiment, config=config)

    def param_keys(self, path: str) -> tuple[str, ...]:
        return (path.split(".")[0],)  # paths are KEY[.sub], as in the param space

    def smoke_config(self, config: Any) -> Any:
        return smoke.smoke_config(config)

    def check(self, experiment: Experiment, address: str | None) -> None:
        validate.check_experiment(experiment, address)

    def param_space(self, experiment: Experiment) -> dict[str, Any]:
        return {**_config(experiment).to_dict(), **experiment.search}

    def trainable(self, experiment: Experiment) -> Any:
        """The function trainable that launches a TorchTrainer. The trial's own process only
        waits on its Train run, whose workers reserve the resources (in their own placement
        group); `max_concurrent_trials` keeps trials from starting Train runs that could
        not get workers."""
        from rlsuite.supervised.trainable import train_driver

        driver = tune.with_parameters(train_driver, checkpoint_every=experiment.checkpoint_every)
        return tune.with_resources(driver, DRIVER_RESOURCES)

    def trial_resources(self, experiment: Experiment) -> dict[str, float]:
        from rlsuite.supervised.trainable import worker_resources

        return {**worker_resources(_config(experiment)), **DRIVER_RESOURCES}

    def trial_bundles(self, experiment: Experiment) -> list[dict[str, float]]:
        """The trial's driver, and one bundle per Train worker (Train's own placement)."""
        from rlsuite.supervised.trainable import worker_resources

        one = worker_resources(_config(experiment).replace(num_workers=1))
        return [dict(DRIVER_RESOURCES), one]

    def max_concurrent_trials(
        self, experiment: Experiment, cluster_resources: dict[str, float]
    ) -> int | None:
        """As many trials as the cluster fits Train runs at their largest: an elastic run
        grows to `max_workers` when the cluster has room, and Train's elastic policy (Ray
        2.60) counts each node's total CPUs, not the free ones, so trials sized by their
        minimum would ask for workers another trial holds."""
        from rlsuite.supervised.trainable import worker_resources

        largest = _largest_trial(experiment)
        free = dict(cluster_resources)
        if registry.dataset_entry(largest.dataset).ray_data:  # its reads need a CPU free
            free["CPU"] = free.get("CPU", 0.0) - READ_CPUS
        fits = [
            int(free.get(name, 0.0) // amount)
            for name, amount in {**worker_resources(largest), **DRIVER_RESOURCES}.items()
            if amount > 0
        ]
        return max(1, min(fits, default=1))

    def check_cluster(self, experiment: Experiment, nodes: list[dict[str, float]]) -> None:
        """Ray Data's reads need a CPU beside the Train workers of every trial, the
        search's largest included, on one node: one that takes every CPU of the cluster,
        or leaves each node only part of one, waits forever."""
        scaling = _searched_scaling(experiment)
        trial = _config(experiment).replace(**scaling)
        room.check_workers_placed(trial, nodes)
        trial = room.workers_placed(trial, nodes)
        searched = {key: value for key, value in scaling.items() if key != "use_gpu"}  # no CPUs
        cpus = sum(node.get("CPU", 0.0) for node in nodes)
        sweep = _sweep_name(experiment, searched)
        room.check_reads_fit(trial, cpus, "the cluster's", searched, sweep)
        room.check_a_node_keeps_a_cpu(trial, nodes)

    def checkpoint_config(self, experiment: Experiment) -> CheckpointConfig:
        # A supervised trial (a function trainable) checkpoints itself, every
        # `checkpoint_every` epochs and after the last; Tune only keeps the newest.
        return CheckpointConfig(
            checkpoint_frequency=0,
            checkpoint_at_end=False,
            num_to_keep=experiment.keep_checkpoints,
        )


def _absolute_paths(config: SupervisedConfig) -> SupervisedConfig:
    """`data_path` and `model_path` relative to where the command runs: Ray's Train
    workers do not run there, so a relative path would miss (URIs pass unchanged)."""
    changes = {}
    for name in ("data_path", "model_path"):
        value = getattr(config, name)
        if isinstance(value, str) and "://" not in value:
            changes[name] = str(Path(value).expanduser().absolute())
    return config.replace(**changes)


def _searched_scaling(experiment: Experiment) -> dict[str, Any]:
    """Each scaling key the search or PBT/PB2's exploration sets, at the largest value it
    can take (an exploit can move a trial to any of PBT's values: a list, as
    `validate` requires of PBT's scaling keys, or PB2's bounds)."""
    config = _config(experiment)
    spaces = (experiment.search, mutation_domains(experiment.scheduler))
    largest = {}
    for key in validate.SCALING_KEYS:
        values = [_largest(space[key], getattr(config, key)) for space in spaces if key in space]
        sizes = [value for value in values if value is not None]  # None: max_workers unset
        if values:
            largest[key] = max(sizes) if sizes else None
    return largest


def _sweep_name(experiment: Experiment, keys: Any) -> str:
    """What sets `keys`: the search, PBT/PB2's exploration, or both."""
    names = ["search"] if set(keys) & set(experiment.search) else []
    if set(keys) & set(mutation_domains(experiment.scheduler)):
        names.append(type(experiment.scheduler).__name__)
    return " and ".join(names)


def _largest_trial(experiment: Experiment) -> SupervisedConfig:
    """The config as the search's largest trial, fixed at the size an elastic run grows
    to when the cluster has room."""
    config = _config(experiment).replace(**_searched_scaling(experiment))
    return config.replace(
        num_workers=max(config.num_workers, config.max_workers or 0), max_workers=None
    )


def _largest(space: Any, default: Any) -> Any:
    """The largest value a searched key can take, of the values the checks before Ray try
    (a `randint`'s upper bound less one: a bound it never gives would refuse a sweep that
    fits). None, max_workers' "a fixed size", is no size; a `sample_from` function's is
    unknown, so the config's own value stands."""
    return max((v for v in candidates(space) if v is not None), default=default)


def _config(experiment: Experiment) -> SupervisedConfig:
    config = experiment.config
    assert isinstance(config, SupervisedConfig), "the supervised workload runs SupervisedConfigs"
    return config
