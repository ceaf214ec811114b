"""Tune's PBT and PB2 with their per-trial clock restored on `--resume`.

Tune (ray 2.60) keeps PBT's scheduler state only in memory: after `Tuner.restore` every
trial looks as if it had never trained. In synchronous mode that hangs the sweep: the
next sync point restarts at `perturbation_interval`, the first sync after the restore
moves it to the trials' current iteration, and `choose_trial_to_run` only runs trials
below it, so none runs again. In asynchronous mode every trial exploits on its first
result after the restore. Restored trials carry their last result; the state starts
from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ray.tune.schedulers import PopulationBasedTraining

if TYPE_CHECKING:
    from ray.tune.experiment import Trial


class _RestoresTrialClock:
    _trial_state: dict[Trial, Any]
    _time_attr: str
    _perturbation_interval: float
    _next_perturbation_sync: float

    def on_trial_add(self, tune_controller: Any, trial: Trial) -> None:
        super().on_trial_add(tune_controller, trial)  # type: ignore[misc]
        reached = (trial.last_result or {}).get(self._time_attr)
        if reached is None:
            return
        state = self._trial_state[trial]
        state.last_train_time = reached
        state.last_perturbation_time = reached
        self._next_perturbation_sync = max(
            self._next_perturbation_sync, reached + self._perturbation_interval
        )


class ResumablePBT(_RestoresTrialClock, PopulationBasedTraining):
    pass


def resumable_pb2(**kwargs: Any) -> PopulationBasedTraining:
    from ray.tune.schedulers.pb2 import PB2  # needs GPy and scikit-learn

    class ResumablePB2(_RestoresTrialClock, PB2):
        pass

    return ResumablePB2(**kwargs)
