"""Tune's PBT and PB2 with their per-trial clock restored on `--resume`, and an exploited
checkpoint that the donor's checkpoint retention cannot delete.

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

import pyarrow.fs
from ray.train import Checkpoint
from ray.train._internal.session import _TrainingResult
from ray.tune.schedulers import PopulationBasedTraining

from rlsuite.results import lookup

if TYPE_CHECKING:
    from ray.tune.experiment import Trial


class _RestoresTrialClock:
    _trial_state: dict[Trial, Any]
    _time_attr: str
    _perturbation_interval: float
    _next_perturbation_sync: float

    def on_trial_add(self, tune_controller: Any, trial: Trial) -> None:
        super().on_trial_add(tune_controller, trial)  # type: ignore[misc]
        reached = lookup(trial.last_result or {}, self._time_attr)  # a nested key too
        if reached is None:
            return
        state = self._trial_state[trial]
        state.last_train_time = reached
        state.last_perturbation_time = reached
        self._next_perturbation_sync = max(
            self._next_perturbation_sync, reached + self._perturbation_interval
        )


EXPLOITED_CHECKPOINT = "exploited_checkpoint"
"""Where in its trial directory an exploiting trial keeps its copy of the donor's checkpoint."""


class _KeepsExploitedCheckpoint:
    """Tune's PBT (ray 2.60) points an exploiting trial at the donor's checkpoint, which the
    donor deletes once it has written `keep_checkpoints` newer ones. A trial that waits
    that long to start again (for a free CPU, or after its node was lost) then fails:
    "Could not recover from checkpoint as it does not exist on storage anymore" (seen in
    tests/test_node_loss.py). The exploiting trial restores from a copy of its own instead,
    one per trial, replaced at its next exploit; its own later checkpoints supersede it."""

    def _exploit(self, tune_controller: Any, trial: Trial, trial_to_clone: Trial) -> None:
        super()._exploit(tune_controller, trial, trial_to_clone)  # type: ignore[misc]
        manager = trial.run_metadata.checkpoint_manager
        donated = manager._latest_checkpoint_result if manager else None  # the donor's
        if manager is None or trial.storage is None or donated is None:
            return
        if donated.checkpoint is None or donated.checkpoint.filesystem is None:
            return
        filesystem = donated.checkpoint.filesystem
        copy_path = f"{trial.storage.trial_fs_path}/{EXPLOITED_CHECKPOINT}"
        if filesystem.get_file_info(copy_path).type != pyarrow.fs.FileType.NotFound:
            filesystem.delete_dir(copy_path)  # the copy from this trial's last exploit
        filesystem.create_dir(copy_path)
        pyarrow.fs.copy_files(
            donated.checkpoint.path,
            copy_path,
            source_filesystem=filesystem,
            destination_filesystem=filesystem,
        )
        manager._latest_checkpoint_result = _TrainingResult(
            checkpoint=Checkpoint(copy_path, filesystem=filesystem), metrics=donated.metrics
        )


class ResumablePBT(_KeepsExploitedCheckpoint, _RestoresTrialClock, PopulationBasedTraining):
    pass


def resumable_pb2(**kwargs: Any) -> PopulationBasedTraining:
    from ray.tune.schedulers.pb2 import PB2  # needs GPy and scikit-learn

    class ResumablePB2(_KeepsExploitedCheckpoint, _RestoresTrialClock, PB2):
        pass

    return ResumablePB2(**kwargs)
