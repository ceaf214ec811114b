"""Builds and runs the Tuner for one experiment: Ray start-up, envs, Tune, results."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray import tune
from ray.rllib.algorithms.algorithm import Algorithm
from ray.tune import (
    CheckpointConfig,
    FailureConfig,
    ResultGrid,
    RunConfig,
    TuneConfig,
    Tuner,
)
from ray.tune.execution.placement_groups import PlacementGroupFactory
from ray.tune.experiment import Trial

import envs
from rlsuite import cluster, pbt
from rlsuite.experiment import PB2, PBT, Experiment
from rlsuite.multiagent.env_runner import BatchedCountsMultiAgentEnvRunner
from rlsuite.progress import ProgressPrinter
from rlsuite.supervised.config import SupervisedConfig

# One torch/BLAS thread per Ray actor: with two, RLlib's sampling on a 2-core machine
# became erratic (up to 25x slower); env runners and learners scale by actors instead.
ACTOR_ENV_VARS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# What a supervised trial's own process reserves: it only waits on its Train run (Tune
# refuses an empty request).
DRIVER_CPUS = 0.01


@dataclass(frozen=True)
class Launch:
    """Where and how to run an experiment (everything the experiment file does not say)."""

    name: str
    storage_path: Path
    address: str | None = None
    resume: bool = False
    max_concurrent_trials: int | None = None

    @property
    def experiment_dir(self) -> Path:
        return self.storage_path / self.name


def run(experiment: Experiment, launch: Launch) -> ResultGrid:
    """Start or join Ray, run every trial through Tune, return Tune's results."""
    # A scheduler metric that a result lacks (no episode finished yet in a long Atari
    # episode) is normal for RL: Tune's strict check would fail the trial for it.
    os.environ.setdefault("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    # The classic reporter at verbose=0 prints nothing; ProgressPrinter prints instead.
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    os.environ.update(ACTOR_ENV_VARS)
    _init_ray(experiment, launch)
    trainable = _trainable(experiment)
    if launch.resume:
        tuner = Tuner.restore(
            str(launch.experiment_dir),
            trainable=trainable,
            resume_unfinished=True,
            resume_errored=True,
            param_space=param_space(experiment),
        )
    else:
        tuner = Tuner(
            trainable,
            param_space=param_space(experiment),
            tune_config=_tune_config(experiment, _max_concurrent_trials(experiment, launch)),
            run_config=_run_config(experiment, launch),
        )
    return tuner.fit()


def param_space(experiment: Experiment) -> dict[str, Any]:
    """The RLlib config (or the SupervisedConfig's fields) as Tune's param space, with the
    experiment's search on top."""
    if isinstance(experiment.config, SupervisedConfig):
        return {**experiment.config.to_dict(), **experiment.search}
    config = experiment.config.copy(copy_frozen=False)
    if isinstance(experiment.scheduler, PBT | PB2):
        config = pbt.with_check(config)
    if experiment.max_failures == 0:
        # Otherwise RLlib restarts a crashed env runner after a minute and returns
        # results without env-runner metrics; fail the trial with the env's error instead.
        config.fault_tolerance(restart_failed_env_runners=False)
    if config.is_multi_agent and config.env_runner_cls is None:
        # RLlib's sampling with its per-step metric calls batched: same results, ~15%
        # faster on MPE spread (see rlsuite/multiagent/env_runner.py).
        config.env_runners(env_runner_cls=BatchedCountsMultiAgentEnvRunner)
    if isinstance(config.env, str) and envs.is_multi_agent(config.env):
        # RLlib's env check resets every sub-env with seed=42, so without --seed all vector
        # sub-envs and env runners replay the same episodes (ray issue 46986). Registry
        # envs pass the same check in tests/test_multiagent_envs.py instead.
        config.environment(disable_env_checking=True)
    return {**config.to_dict(), **experiment.search}


def required_cpus(experiment: Experiment) -> float:
    """CPUs one trial reserves: its main process, env runners and learners."""
    return _trial_request(experiment).get("CPU", 0.0)


def algorithm_class(experiment: Experiment) -> type[Algorithm]:
    assert not isinstance(experiment.config, SupervisedConfig)
    algo_class = experiment.config.algo_class
    assert isinstance(algo_class, type) and issubclass(algo_class, Algorithm)
    return algo_class


def _init_ray(experiment: Experiment, launch: Launch) -> None:
    if ray.is_initialized():
        return
    if launch.address:
        cluster.connect(launch.address, ACTOR_ENV_VARS)
        cluster.check_resources(_trial_request(experiment), ray.cluster_resources())
        cluster.check_shared_storage(str(launch.storage_path))
        return
    # On a small machine a trial may reserve more CPUs than exist (e.g. PPO's main
    # process plus two env runners on 2 cores); oversubscribe rather than wait forever.
    cpus = max(os.cpu_count() or 1, int(required_cpus(experiment) + 0.999))
    runtime_env: dict[str, Any] = {"env_vars": ACTOR_ENV_VARS}
    if isinstance(experiment.config, SupervisedConfig):
        # Not RLlib's warm-up: supervised runs start many small processes (Train's
        # controller and helpers) that never use RLlib. See worker_setup for this one.
        runtime_env["worker_process_setup_hook"] = "rlsuite.supervised.worker_setup.pin_ray_address"
    else:
        runtime_env["worker_process_setup_hook"] = "rlsuite.warmup.import_rllib"
    # "local": a Ray of our own even while a `ray start` cluster runs on this machine
    # (plain ray.init() would join that one, and refuses num_cpus when it does).
    # With Ray's dashboard, though it costs ~2.5 s of CPU per start: it serves the State
    # API, through which rlsuite.failures reads a crashed env runner's error and Ray
    # Train's PlacementGroupCleaner frees the workers of a TorchTrainer that Tune stopped
    # (a PBT exploit; without it the next trial waits for them forever).
    ray.init(address="local", num_cpus=cpus, runtime_env=runtime_env)


def _trainable(experiment: Experiment) -> Any:
    """What Tune runs per trial: the RLlib Algorithm class (its env registered first) or,
    for a supervised experiment, the function trainable that launches a TorchTrainer."""
    if isinstance(experiment.config, SupervisedConfig):
        from rlsuite.supervised.trainable import train_driver

        # The trial's own process only waits on its Train run, whose workers reserve the
        # resources (in their own placement group); `_max_concurrent_trials` keeps trials
        # from starting Train runs that could not get workers.
        driver = tune.with_parameters(train_driver, checkpoint_every=experiment.checkpoint_every)
        return tune.with_resources(driver, {"CPU": DRIVER_CPUS})
    if isinstance(experiment.config.env, str):
        envs.register(experiment.config.env)
    return algorithm_class(experiment)


def _max_concurrent_trials(experiment: Experiment, launch: Launch) -> int | None:
    """The flag's value; for supervised trials, as many as the cluster fits Train runs."""
    if launch.max_concurrent_trials or not isinstance(experiment.config, SupervisedConfig):
        return launch.max_concurrent_trials
    total = ray.cluster_resources()
    fits = [
        int(total.get(name, 0.0) // amount)
        for name, amount in _trial_request(experiment).items()
        if amount > 0
    ]
    return max(1, min(fits, default=1))


def _trial_request(experiment: Experiment) -> dict[str, float]:
    if isinstance(experiment.config, SupervisedConfig):
        from rlsuite.supervised.trainable import worker_resources

        resources = worker_resources(experiment.config)
        return {**resources, "CPU": resources["CPU"] + DRIVER_CPUS}
    request = algorithm_class(experiment).default_resource_request(experiment.config)
    assert isinstance(request, PlacementGroupFactory)
    return cluster.trial_resources(request)


def _tune_config(experiment: Experiment, max_concurrent_trials: int | None) -> TuneConfig:
    scheduler = experiment.scheduler
    return TuneConfig(
        num_samples=experiment.num_samples,
        max_concurrent_trials=max_concurrent_trials,
        scheduler=scheduler.build(experiment.metric, experiment.mode) if scheduler else None,
        trial_dirname_creator=_trial_dirname,
        trial_name_creator=_trial_dirname,
    )


def _run_config(experiment: Experiment, launch: Launch) -> RunConfig:
    # A supervised trial (a function trainable) checkpoints itself, every
    # `checkpoint_every` epochs and after the last; Tune only keeps the newest.
    supervised = isinstance(experiment.config, SupervisedConfig)
    return RunConfig(
        name=launch.name,
        storage_path=str(launch.storage_path),
        stop=dict(experiment.stop),
        checkpoint_config=CheckpointConfig(
            checkpoint_frequency=0 if supervised else experiment.checkpoint_every,
            checkpoint_at_end=not supervised,
            num_to_keep=experiment.keep_checkpoints,
        ),
        failure_config=FailureConfig(max_failures=experiment.max_failures),
        callbacks=[ProgressPrinter()],
        verbose=0,
    )


def _trial_dirname(trial: Trial) -> str:
    return f"{trial.trainable_name}_{trial.trial_id}"


__all__ = ["Launch", "param_space", "required_cpus", "run"]
