"""Feeding the progress callbacks as Tune does, for the tests of the lines and the live view:
real Tune `Trial`s whose driver staging folders (which a running Ray session provides)
point into tmp_path, and results shaped as RLlib reports them."""

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ray.tune import Callback
from ray.tune.execution.placement_groups import PlacementGroupFactory
from ray.tune.experiment import Trial
from rich.console import Console

from rlsuite import metrics
from rlsuite.launcher.live import LiveProgress, progress_callback
from tests.helpers import nested

STOP = {metrics.TRAINING_ITERATION: 4.0}
RETURN = metrics.EPISODE_RETURN_MEAN


class StagedTrial(Trial):
    """A Tune trial whose driver-side folders are `staging` (Ray's session folder in a run)."""

    def __init__(self, staging: Path, index: int, tag: str = "", **kwargs: Any):
        super().__init__(
            "PPO",
            config={"lr": 3e-4, "clip_param": 0.2},
            trial_id=f"abcde_{index:05d}",
            experiment_tag=tag or f"{index}_lr=0.0003",
            placement_group_factory=PlacementGroupFactory([{"CPU": 1}]),
            **kwargs,
        )
        self.staging = staging
        (staging / self.trial_id).mkdir(parents=True, exist_ok=True)

    @property
    def local_experiment_path(self) -> str:
        return str(self.staging)

    @property
    def local_path(self) -> str:
        return str(self.staging / self.trial_id)


def rl_result(iteration: int, time_s: float, env_steps: int, ret: float, **extra: Any) -> dict:
    """A training result nested as RLlib and Tune report it."""
    flat = {
        metrics.TRAINING_ITERATION: iteration,
        metrics.TIME_TOTAL_S: time_s,
        metrics.ENV_STEPS_SAMPLED_LIFETIME: env_steps,
        metrics.EPISODE_RETURN_MEAN: ret,
        metrics.ENV_STEPS_PER_SECOND: env_steps / time_s,
        **extra,
    }
    return nested(flat)


def live_on(console_file: io.StringIO, stop: dict[str, float], num_trials: int) -> LiveProgress:
    callback = progress_callback("auto", stop, RETURN)
    assert isinstance(callback, LiveProgress)
    callback.start(Console(file=console_file, width=120, color_system=None), num_trials)
    return callback


def feed(callback: Callback, trial: Trial, *results: dict, trials: Sequence[Trial] = ()) -> None:
    """Start `trial` and report its `results`, as Tune's controller does; `trials`: all."""
    trial.set_status(Trial.RUNNING)
    trials = list(trials) or [trial]
    callback.on_trial_start(iteration=0, trials=trials, trial=trial)
    for result in results:  # the callbacks, then the trial
        callback.on_trial_result(iteration=0, trials=trials, trial=trial, result=result)
        trial.update_last_result(result)
