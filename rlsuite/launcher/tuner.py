"""Builds and runs the Tuner for one experiment: Ray start-up, Tune, results."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray.tune import FailureConfig, ResultGrid, RunConfig, TuneConfig, Tuner
from ray.tune.experiment import Trial

from rlsuite.experiment import Experiment
from rlsuite.launcher import cluster
from rlsuite.launcher.progress import ProgressPrinter
from rlsuite.launcher.workloads import workload_for
from rlsuite.workload import Workload

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
    workload = workload_for(experiment.config)
    _init_ray(experiment, launch, workload)
    trainable = workload.trainable(experiment)
    if launch.resume:
        tuner = Tuner.restore(
            str(launch.experiment_dir),
            trainable=trainable,
            resume_unfinished=True,
            resume_errored=True,
            param_space=workload.param_space(experiment),
        )
    else:
        max_concurrent = launch.max_concurrent_trials or workload.max_concurrent_trials(
            experiment, ray.cluster_resources()
        )
        tuner = Tuner(
            trainable,
            param_space=workload.param_space(experiment),
            tune_config=_tune_config(experiment, max_concurrent),
            run_config=_run_config(experiment, launch, workload),
        )
    return tuner.fit()


def param_space(experiment: Experiment) -> dict[str, Any]:
    """Tune's param space of the experiment (its config as a dict, the search on top)."""
    return workload_for(experiment.config).param_space(experiment)


def required_cpus(experiment: Experiment) -> float:
    """CPUs one trial reserves: its main process, env runners and learners."""
    return workload_for(experiment.config).trial_resources(experiment).get("CPU", 0.0)


def _init_ray(experiment: Experiment, launch: Launch, workload: Workload) -> None:
    if ray.is_initialized():
        return
    if launch.address:
        cluster.connect(launch.address, ACTOR_ENV_VARS)
        cluster.check_resources(workload.trial_resources(experiment), ray.cluster_resources())
        cluster.check_shared_storage(str(launch.storage_path))
        return
    # On a small machine a trial may reserve more CPUs than exist (e.g. PPO's main
    # process plus two env runners on 2 cores); oversubscribe rather than wait forever.
    cpus = max(os.cpu_count() or 1, int(required_cpus(experiment) + 0.999))
    runtime_env: dict[str, Any] = {
        "env_vars": ACTOR_ENV_VARS,
        "worker_process_setup_hook": workload.worker_setup_hook,
    }
    # "local": a Ray of our own even while a `ray start` cluster runs on this machine
    # (plain ray.init() would join that one, and refuses num_cpus when it does).
    # With Ray's dashboard, though it costs ~2.5 s of CPU per start: it serves the State
    # API, through which rlsuite.launcher.failures reads a crashed env runner's error and
    # Ray Train's PlacementGroupCleaner frees the workers of a TorchTrainer that Tune
    # stopped (a PBT exploit; without it the next trial waits for them forever).
    ray.init(address="local", num_cpus=cpus, runtime_env=runtime_env)


def _tune_config(experiment: Experiment, max_concurrent_trials: int | None) -> TuneConfig:
    scheduler = experiment.scheduler
    return TuneConfig(
        num_samples=experiment.num_samples,
        max_concurrent_trials=max_concurrent_trials,
        scheduler=scheduler.build(experiment.metric, experiment.mode) if scheduler else None,
        trial_dirname_creator=_trial_dirname,
        trial_name_creator=_trial_dirname,
    )


def _run_config(experiment: Experiment, launch: Launch, workload: Workload) -> RunConfig:
    return RunConfig(
        name=launch.name,
        storage_path=str(launch.storage_path),
        stop=dict(experiment.stop),
        checkpoint_config=workload.checkpoint_config(experiment),
        failure_config=FailureConfig(max_failures=experiment.max_failures),
        callbacks=[ProgressPrinter()],
        verbose=0,
    )


def _trial_dirname(trial: Trial) -> str:
    return f"{trial.trainable_name}_{trial.trial_id}"


__all__ = ["Launch", "param_space", "required_cpus", "run"]
