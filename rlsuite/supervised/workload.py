"""The supervised workload: a `SupervisedConfig` trained by a Ray Train run per Tune trial."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ray import tune
from ray.tune import CheckpointConfig

from rlsuite.experiment import Experiment
from rlsuite.options import RunOptions
from rlsuite.supervised import overrides, registry, smoke, validate
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.validate import READ_CPUS

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

        config = _config(experiment)
        scaling = {
            key: _largest(experiment.search[key], getattr(config, key))
            for key in ("num_workers", "max_workers", "cpus_per_worker", "use_gpu")
            if key in experiment.search
        }
        config = config.replace(**scaling)
        largest = config.replace(num_workers=max(config.num_workers, config.max_workers or 0))
        free = dict(cluster_resources)
        if registry.dataset_entry(config.dataset).ray_data:  # its reads need a CPU free
            free["CPU"] = free.get("CPU", 0.0) - READ_CPUS
        fits = [
            int(free.get(name, 0.0) // amount)
            for name, amount in {**worker_resources(largest), **DRIVER_RESOURCES}.items()
            if amount > 0
        ]
        return max(1, min(fits, default=1))

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


def _largest_of(values: Any, default: Any) -> Any:
    """None (max_workers' "a fixed size") is no size: the others', else the default."""
    return max((v for v in values if v is not None), default=default)


def _largest(space: Any, default: Any) -> Any:
    """The largest value a searched key can take: a grid's or a choice's largest, a
    range's upper bound (Tune's `randint` excludes it: one more than can come, never
    less); a `sample_from` function's is unknown, so the config's own value stands."""
    if isinstance(space, dict) and "grid_search" in space:
        return _largest_of(space["grid_search"], default)
    if hasattr(space, "categories"):
        return _largest_of(space.categories, default)
    if hasattr(space, "upper"):
        return space.upper
    return default if callable(space) or hasattr(space, "sample") else space


def _config(experiment: Experiment) -> SupervisedConfig:
    config = experiment.config
    assert isinstance(config, SupervisedConfig), "the supervised workload runs SupervisedConfigs"
    return config
