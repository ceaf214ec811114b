"""Builds and runs the Tuner for one experiment: Ray start-up (`ray_session`), Tune,
results."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import ray
from ray.tune import FailureConfig, ResultGrid, RunConfig, TuneConfig, Tuner
from ray.tune.experiment import Trial

from rlsuite.errors import UsageError
from rlsuite.experiment import Experiment
from rlsuite.launcher import console, failures
from rlsuite.launcher.experiment_state import sync_after_every_trial_checkpoint
from rlsuite.launcher.live import progress_callback, stop_live_views
from rlsuite.launcher.ray_session import ACTOR_ENV_VARS, init_ray
from rlsuite.launcher.shutdown import SHUTDOWN, EndsRunOnceAllPaused, pausing
from rlsuite.launcher.workloads import workload_for
from rlsuite.search import BOHB
from rlsuite.tracking import Tracking, tracking_callbacks
from rlsuite.workload import Workload


@dataclass(frozen=True)
class Launch:
    """Where and how to run an experiment (everything the experiment file does not say)."""

    name: str
    storage_path: Path
    address: str | None = None
    resume: bool = False
    max_concurrent_trials: int | None = None
    experiment_file: Path | None = None
    """The file the experiment came from (recorded in summary.json: `rlsuite.evaluate` loads
    it again for envs it registers)."""
    overwrite: bool = False
    """Move a run already in `experiment_dir` aside before this one starts."""
    verbose: bool = False
    """Ray's own output on the terminal too (otherwise only in `logs_dir`)."""
    progress: str = "auto"
    """What the terminal shows while trials run: "auto" (a live view on a terminal, a line
    per result otherwise), "lines" or "quiet"."""
    tracking: Tracking = field(default_factory=Tracking)
    """MLflow and W&B runs per trial besides Tune's own files (`rlsuite.tracking`)."""

    @property
    def experiment_dir(self) -> Path:
        return self.storage_path / self.name

    @property
    def logs_dir(self) -> Path:
        return self.experiment_dir / "logs"


def run(experiment: Experiment, launch: Launch) -> ResultGrid:
    """Start or join Ray, run every trial through Tune, return Tune's results."""
    # A scheduler metric that a result lacks (no episode finished yet in a long Atari
    # episode) is normal for RL: Tune's strict check would fail the trial for it.
    os.environ.setdefault("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    # The classic reporter at verbose=0 prints nothing; progress_callback prints instead.
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    os.environ.update(ACTOR_ENV_VARS)
    sync_after_every_trial_checkpoint()  # a SIGKILLed driver resumes from the latest ones
    workload = workload_for(experiment.config)
    init_ray(experiment, launch, workload)
    console.keep_log()  # Ray is up and the cluster checks passed: the run keeps its logs
    SHUTDOWN.install()  # after ray.init, which sets Ray's own SIGTERM handler
    failures.stop_lookups_when(stop_asked)
    trainable = workload.trainable(experiment)
    try:
        if launch.resume:
            tuner = _restored(launch, trainable, workload.param_space(experiment))
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
    finally:
        SHUTDOWN.uninstall()
        stop_live_views()  # a Ctrl-C while Tune stops ends fit without on_experiment_end


def stop_asked() -> bool:
    """Whether SIGTERM or Ctrl-C asked this run to stop (SIGTERM: also once it ended,
    when the process has seconds left before the sender kills it)."""
    return SHUTDOWN.requested or SHUTDOWN.terminated


def _restored(launch: Launch, trainable: Any, space: dict[str, Any]) -> Tuner:
    try:
        return Tuner.restore(
            str(launch.experiment_dir),
            trainable=trainable,
            resume_unfinished=True,
            resume_errored=True,
            param_space=space,
        )
    except ValueError as error:
        if "param_space" not in str(error):
            raise
        # Tune compares the trials' config keys; its message lists hundreds of them.
        raise UsageError(
            f"--resume {launch.experiment_dir}: its trials were made with other flags "
            "that shape them (--seeds, --num-samples, a searched --set); resume with "
            "the command that started it plus --resume, as its interruption printed"
        ) from None


def param_space(experiment: Experiment) -> dict[str, Any]:
    """Tune's param space of the experiment (its config as a dict, the search on top)."""
    return workload_for(experiment.config).param_space(experiment)


def required_cpus(experiment: Experiment) -> float:
    """CPUs one trial reserves: its main process, env runners and learners."""
    return workload_for(experiment.config).trial_resources(experiment).get("CPU", 0.0)


def _tune_config(experiment: Experiment, max_concurrent_trials: int | None) -> TuneConfig:
    metric, mode = experiment.metric, experiment.mode
    scheduler = experiment.scheduler.build(metric, mode) if experiment.scheduler else None
    search_alg = None
    searcher = experiment.searcher
    if searcher is not None:
        if max_concurrent_trials:
            # The searcher's ConcurrencyLimiter is the one limit (Tune refuses a second).
            limit = min(searcher.max_concurrent, max_concurrent_trials)
            searcher = replace(searcher, max_concurrent=limit)
            max_concurrent_trials = None
        if isinstance(searcher, BOHB):
            scheduler = searcher.scheduler(metric, mode, experiment.stop)
        search_alg = searcher.build(metric, mode)
    return TuneConfig(
        num_samples=experiment.num_samples,
        max_concurrent_trials=max_concurrent_trials,
        search_alg=search_alg,
        scheduler=pausing(scheduler),
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
        callbacks=[
            progress_callback(launch.progress, experiment.stop, experiment.metric, experiment.mode),
            EndsRunOnceAllPaused(),
            *tracking_callbacks(launch, experiment),
        ],
        verbose=0,
    )


def _trial_dirname(trial: Trial) -> str:
    return f"{trial.trainable_name}_{trial.trial_id}"


__all__ = ["ACTOR_ENV_VARS", "Launch", "param_space", "required_cpus", "run"]
