"""RLlib's `store_buffer_in_checkpoints` with the suite's replay from arrays
(rlsuite.multiagent.transitions): a checkpoint keeps the buffer's rows and its sampler,
a restore puts them back, and without the flag nothing is kept and the restore says so."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ray.rllib.core.columns import Columns

from rlsuite.launcher.loader import load_experiment
from rlsuite.multiagent.transition_buffer import TransitionReplayBuffer
from rlsuite.multiagent.transitions import BUFFER_STATE
from rlsuite.rl.smoke import smoke_config
from tests.helpers import ROOT, local_ray
from tests.test_transitions import episode


def test_sampler_state_restores() -> None:
    buffer = TransitionReplayBuffer(50, seed=3)
    buffer.add([episode(0, 20, terminated=True)])
    buffer.sample(7)  # the sampler has moved on from its seed
    restored = TransitionReplayBuffer(50, seed=99)
    restored.set_state(buffer.get_state())
    for _ in range(3):
        np.testing.assert_array_equal(
            buffer.sample(32)[Columns.ACTIONS], restored.sample(32)[Columns.ACTIONS]
        )


def _config(store: bool) -> Any:
    config = smoke_config(load_experiment(ROOT / "experiments" / "maddpg_tag.py").config)
    return config.training(store_buffer_in_checkpoints=store).debugging(seed=0)


def _restored_buffer(config: Any, checkpoint: Path) -> dict[str, Any]:
    algo = config.build_algo()
    try:
        assert len(algo.local_replay_buffer) == 0
        algo.restore_from_path(checkpoint)
        return algo.local_replay_buffer.get_state()
    finally:
        algo.stop()


def test_checkpoint_keeps_the_buffer_where_asked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with local_ray():
        algo = _config(store=True).build_algo()
        try:
            algo.train()
            algo.train()
            saved = algo.local_replay_buffer.get_state()
            algo.save_to_path(tmp_path / "with")
            assert BUFFER_STATE not in algo.get_state(components="learner_group")
        finally:
            algo.stop()
        restored = _restored_buffer(_config(store=True), tmp_path / "with")
        with caplog.at_level(logging.WARNING, logger="rlsuite.multiagent.transitions"):
            ignored = _restored_buffer(_config(store=False), tmp_path / "with")

    assert saved["added"] > 0 and restored["added"] == saved["added"]
    assert restored["rng"] == saved["rng"]
    for name, arrays in saved["columns"].items():
        for mine, theirs in zip(restored["columns"][name], arrays, strict=True):
            np.testing.assert_array_equal(mine, theirs)
    assert ignored["added"] == 0
    assert "holds a replay buffer, and store_buffer_in_checkpoints is False" in caplog.text


def test_checkpoint_without_the_flag_holds_no_buffer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with local_ray():
        algo = _config(store=False).build_algo()
        try:
            algo.train()
            assert BUFFER_STATE not in algo.get_state()
            algo.save_to_path(tmp_path / "without")
        finally:
            algo.stop()
        with caplog.at_level(logging.WARNING, logger="rlsuite.multiagent.transitions"):
            restored = _restored_buffer(_config(store=True), tmp_path / "without")
    assert restored["added"] == 0
    assert "holds no replay buffer, and store_buffer_in_checkpoints is True" in caplog.text
