"""Tune writes the experiment state after every trial checkpoint, not after every event
(rlsuite.launcher.experiment_state); the end-to-end guarantee, a SIGKILLed driver resuming
within one checkpoint interval: tests/test_stop_signals.py (slow) and tests/test_search.py."""

from __future__ import annotations

from ray.tune.execution.experiment_state import _ExperimentCheckpointManager

from rlsuite.launcher.experiment_state import sync_after_every_trial_checkpoint


def test_every_trial_checkpoint_forces_a_write_on_tunes_own_period() -> None:
    sync_after_every_trial_checkpoint()
    sync_after_every_trial_checkpoint()  # idempotent: wrapped once
    manager = _ExperimentCheckpointManager(
        storage=None, checkpoint_period="auto", sync_every_n_trial_checkpoints=5
    )
    assert manager.auto_checkpoint_enabled and manager._checkpoint_period >= 10
    assert not manager._should_force_sync_up
    manager.on_trial_checkpoint(trial=object())  # type: ignore[arg-type]
    assert manager._should_force_sync_up  # with num_to_keep=5, Tune waits for 5
