"""Builds and runs the Tuner for one experiment: Ray start-up, Tune, results."""

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
from rlsuite.launcher import cluster, console
from rlsuite.launcher.experiment_state import sync_after_every_trial_checkpoint
from rlsuite.launcher.live import progress_callback, stop_live_views
from rlsuite.launcher.shutdown import SHUTDOWN, EndsRunOnceAllPaused, pausing
from rlsuite.launcher.workloads import workload_for
from rlsuite.search import BOHB
from rlsuite.tracking import Tracking, tracking_callbacks
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
    _init_ray(experiment, launch, workload)
    console.keep_log()  # Ray is up and the cluster checks passed: the run keeps its logs
    SHUTDOWN.install()  # after ray.init, which sets Ray's own SIGTERM handler
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


def _init_ray(experiment: Experiment, launch: Launch, workload: Workload) -> None:
    if ray.is_initialized():
        return
    if launch.address:
        cluster.connect(
            launch.address,
            ACTOR_ENV_VARS,
            workload.worker_setup_hook,
            log_to_driver=launch.verbose,
        )
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
    cluster.ensure_auth_token()
    ray.init(
        address="local",
        num_cpus=cpus,
        runtime_env=runtime_env,
        log_to_driver=launch.verbose,  # workers' output stays in Ray's session logs
        # Ray prestarts an idle worker per CPU when the driver connects; a trial's actors
        # each start a process of their own (a run's logs show the prestarted ones never
        # running anything), so they only take CPU from the start-up. Measured, smoke of
        # ppo_cartpole.py, 5 alternating rounds: median 21.1 s with them, 19.9 s without.
        _system_config={"prestart_worker_first_driver": False},
    )


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


__all__ = ["Launch", "param_space", "required_cpus", "run"]
