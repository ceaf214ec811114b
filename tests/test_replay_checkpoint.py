"""RLlib's `store_buffer_in_checkpoints` with the suite's replay from arrays
(rlsuite.multiagent.transitions): a checkpoint keeps the buffer's rows and its sampler,
a restore puts them back, and without the flag nothing is kept and the restore says so."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ray.rllib.core.columns import Columns

from rlsuite.launcher.loader import load_experiment
from rlsuite.multiagent.buffer_checkpoint import BUFFER_STATE
from rlsuite.multiagent.maddpg.joint_env import OBS
from rlsuite.multiagent.transition_buffer import TransitionReplayBuffer
from rlsuite.rl.smoke import smoke_config
from tests.helpers import ROOT, local_ray
from tests.test_transitions import episode


@pytest.mark.parametrize("rows", [20, 35])  # within the capacity, and wrapped around it
def test_same_capacity_restores_the_ring_and_its_sampler(rows: int) -> None:
    buffer = TransitionReplayBuffer(25, seed=3)
    buffer.add([episode(0, rows, terminated=True)])
    buffer.sample(7)  # the sampler has moved on from its seed
    restored = TransitionReplayBuffer(25, seed=99)
    restored.set_state(buffer.get_state())
    for _ in range(3):
        mine, theirs = restored.sample(32), buffer.sample(32)
        np.testing.assert_array_equal(mine[Columns.OBS][OBS], theirs[Columns.OBS][OBS])
    buffer.add([episode(100, 3, terminated=True)])  # both overwrite the same oldest rows
    restored.add([episode(100, 3, terminated=True)])
    np.testing.assert_array_equal(
        restored.sample(64)[Columns.OBS][OBS], buffer.sample(64)[Columns.OBS][OBS]
    )


def test_smaller_capacity_keeps_the_newest_rows() -> None:
    buffer = TransitionReplayBuffer(25, seed=0)
    buffer.add([episode(0, 35, terminated=True)])  # rows 10-34 kept, wrapped
    smaller = TransitionReplayBuffer(5, seed=0)
    smaller.set_state(buffer.get_state())
    assert set(np.unique(smaller.sample(200)[Columns.OBS][OBS])) == {30, 31, 32, 33, 34}


def _config(store: bool) -> Any:
    config: Any = smoke_config(load_experiment(ROOT / "experiments" / "maddpg_tag.py").config)
    return config.training(store_buffer_in_checkpoints=store).debugging(seed=0)


def _restored_buffer(config: Any, checkpoint: Path) -> dict[str, Any]:
    """Restored as Tune restores a trial (`load_checkpoint`, which calls
    `restore_from_path`); then a partial state, as `set_weights` passes, warns of nothing."""
    algo = config.build_algo()
    try:
        assert len(algo.local_replay_buffer) == 0
        algo.load_checkpoint(checkpoint)
        restored = algo.local_replay_buffer.get_state()
        with _no_new_warnings():
            algo.set_state(algo.get_state(components="learner_group"))
        return restored
    finally:
        algo.stop()


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _no_new_warnings() -> Iterator[None]:
    handler = _Records()
    watched = logging.getLogger("rlsuite.multiagent.buffer_checkpoint")
    watched.addHandler(handler)
    try:
        yield
    finally:
        watched.removeHandler(handler)
    assert not handler.records, [record.getMessage() for record in handler.records]


def _trained_and_saved(store: bool, iterations: int, checkpoint: Path) -> dict[str, Any]:
    """Train, save a checkpoint; the buffer's state as saved. Checks that the buffer is in
    the base state only where asked, and never in a single component's."""
    algo = _config(store).build_algo()
    try:
        for _ in range(iterations):
            algo.train()
        assert (BUFFER_STATE in algo.get_state()) == store
        assert BUFFER_STATE not in algo.get_state(components="learner_group")
        algo.save_to_path(checkpoint)
        return algo.local_replay_buffer.get_state()
    finally:
        algo.stop()


@pytest.fixture(scope="module")
def one_ray() -> Iterator[None]:
    """One Ray for this file's builds (a start costs ~10 s of CI on 2 vCPUs)."""
    with local_ray():
        yield


def test_checkpoint_keeps_the_buffer_where_asked(
    one_ray: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    saved = _trained_and_saved(store=True, iterations=2, checkpoint=tmp_path / "with")
    restored = _restored_buffer(_config(store=True), tmp_path / "with")
    with caplog.at_level(logging.WARNING, logger="rlsuite.multiagent.buffer_checkpoint"):
        ignored = _restored_buffer(_config(store=False), tmp_path / "with")

    assert saved["added"] > 0 and restored["added"] == saved["added"]
    assert restored["rng"] == saved["rng"]
    for name, arrays in saved["columns"].items():
        for mine, theirs in zip(restored["columns"][name], arrays, strict=True):
            np.testing.assert_array_equal(mine, theirs)
    assert ignored["added"] == 0
    assert "holds a replay buffer, and store_buffer_in_checkpoints is False" in caplog.text


def test_checkpoint_without_the_flag_holds_no_buffer(
    one_ray: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _trained_and_saved(store=False, iterations=1, checkpoint=tmp_path / "without")
    with caplog.at_level(logging.WARNING, logger="rlsuite.multiagent.buffer_checkpoint"):
        restored = _restored_buffer(_config(store=True), tmp_path / "without")
    assert restored["added"] == 0
    assert "holds no replay buffer, and store_buffer_in_checkpoints is True" in caplog.text
