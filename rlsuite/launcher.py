"""Builds and runs the Tuner for one experiment: Ray start-up, envs, Tune, results."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
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
from rlsuite.progress import ProgressPrinter

# One torch/BLAS thread per Ray actor: with two, RLlib's sampling on a 2-core machine
# became erratic (up to 25x slower); env runners and learners scale by actors instead.
ACTOR_ENV_VARS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


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
    if isinstance(experiment.config.env, str):
        envs.register(experiment.config.env)
    trainable = algorithm_class(experiment)
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
            tune_config=_tune_config(experiment, launch.max_concurrent_trials),
            run_config=_run_config(experiment, launch),
        )
    return tuner.fit()


def param_space(experiment: Experiment) -> dict[str, Any]:
    """The RLlib config as Tune's param space, with the experiment's search on top."""
    config = experiment.config.copy(copy_frozen=False)
    if isinstance(experiment.scheduler, PBT | PB2):
        config = pbt.with_check(config)
    if experiment.max_failures == 0:
        # Otherwise RLlib restarts a crashed env runner after a minute and returns
        # results without env-runner metrics; fail the trial with the env's error instead.
        config.fault_tolerance(restart_failed_env_runners=False)
    return {**config.to_dict(), **experiment.search}


def required_cpus(experiment: Experiment) -> float:
    """CPUs one trial reserves: its main process, env runners and learners."""
    return _trial_request(experiment).get("CPU", 0.0)


def algorithm_class(experiment: Experiment) -> type[Algorithm]:
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
    runtime_env = {
        "env_vars": ACTOR_ENV_VARS,
        "worker_process_setup_hook": "rlsuite.warmup.import_rllib",
    }
    ray.init(num_cpus=cpus, runtime_env=runtime_env)


def _trial_request(experiment: Experiment) -> dict[str, float]:
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
    return RunConfig(
        name=launch.name,
        storage_path=str(launch.storage_path),
        stop=dict(experiment.stop),
        checkpoint_config=CheckpointConfig(
            checkpoint_frequency=experiment.checkpoint_every,
            checkpoint_at_end=True,
            num_to_keep=experiment.keep_checkpoints,
        ),
        failure_config=FailureConfig(max_failures=experiment.max_failures),
        callbacks=[ProgressPrinter()],
        verbose=0,
    )


def _trial_dirname(trial: Trial) -> str:
    return f"{trial.trainable_name}_{trial.trial_id}"


__all__ = ["Launch", "param_space", "required_cpus", "run"]
