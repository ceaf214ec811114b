"""MADDPG's transition replay (rlsuite.multiagent.transitions): rows are the episodes' real
one-step transitions, the ring keeps the newest `capacity`, its state restores, and a
batch holds what RLlib's own buffer and learner connector make of the same episodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from rlsuite.launcher.loader import load_experiment
from rlsuite.multiagent.maddpg.joint_env import AGENT_REWARDS, OBS
from rlsuite.multiagent.qmix import QMIXConfig
from rlsuite.multiagent.transition_buffer import TransitionReplayBuffer
from rlsuite.multiagent.transitions import uses_transition_replay
from rlsuite.rl.smoke import smoke_config
from tests.helpers import ROOT, local_ray


def episode(start: int, steps: int, terminated: bool) -> SingleAgentEpisode:
    """Observation t is {"obs": [[start + t]], "agent_rewards": [start + t]}; action t is t."""
    values = [float(start + t) for t in range(steps + 1)]
    ep = SingleAgentEpisode(
        observations=[
            {OBS: np.full((1, 1), v, np.float32), AGENT_REWARDS: np.array([v], np.float32)}
            for v in values
        ],
        actions=[np.array([t]) for t in range(steps)],
        rewards=[float(t) for t in range(steps)],
        terminated=terminated,
        len_lookback_buffer=0,
    )
    return ep.to_numpy()


def test_rows_are_the_episodes_transitions() -> None:
    buffer = TransitionReplayBuffer(capacity=100, seed=0)
    buffer.add([episode(0, 5, terminated=True), episode(10, 3, terminated=False)])
    assert len(buffer) == 8
    batch = buffer.sample(256)
    obs, next_obs = batch[Columns.OBS][OBS][:, 0, 0], batch[Columns.NEXT_OBS][OBS][:, 0, 0]
    np.testing.assert_array_equal(next_obs, obs + 1)
    np.testing.assert_array_equal(batch[Columns.NEXT_OBS][AGENT_REWARDS][:, 0], next_obs)
    step = obs - np.where(obs >= 10, 10, 0)
    np.testing.assert_array_equal(batch[Columns.ACTIONS][:, 0], step)
    np.testing.assert_array_equal(batch[Columns.REWARDS], step)
    # Only the finished episode's last step is terminal; a chunk's end is not.
    np.testing.assert_array_equal(batch[Columns.TERMINATEDS], obs == 4)
    assert not batch[Columns.TRUNCATEDS].any()
    assert set(np.unique(obs)) == {0, 1, 2, 3, 4, 10, 11, 12}  # every row drawn
    assert (batch["weights"] == 1).all()


def test_ring_keeps_the_newest_and_its_state_restores() -> None:
    buffer = TransitionReplayBuffer(capacity=4, seed=0)
    buffer.add([episode(0, 3, terminated=True), episode(10, 3, terminated=True)])
    kept = set(np.unique(buffer.sample(200)[Columns.OBS][OBS]))
    assert kept == {2, 10, 11, 12} and buffer.added == 6
    restored = TransitionReplayBuffer(capacity=4, seed=0)
    restored.set_state(buffer.get_state())
    assert set(np.unique(restored.sample(200)[Columns.OBS][OBS])) == kept
    restored.add([episode(20, 2, terminated=True)])
    assert set(np.unique(restored.sample(200)[Columns.OBS][OBS])) == {11, 12, 20, 21}


def test_same_seed_same_batches() -> None:
    one, two = TransitionReplayBuffer(50, seed=3), TransitionReplayBuffer(50, seed=3)
    for buffer in (one, two):
        buffer.add([episode(0, 20, terminated=True)])
    np.testing.assert_array_equal(one.sample(32)[Columns.ACTIONS], two.sample(32)[Columns.ACTIONS])


def test_batch_matches_rllibs_buffer_and_learner_connector() -> None:
    """maddpg_tag's smoke config with RLlib's buffer: every row of the batch RLlib's
    buffer and learner connector make is a row of ours built from the same episodes,
    with the same columns, dtypes and shapes."""
    config = smoke_config(load_experiment(ROOT / "experiments" / "maddpg_tag.py").config)
    config.training(transition_replay=False).debugging(seed=0)
    with local_ray():
        algo = config.build_algo()
        try:
            algo.train()
            episodes = algo.local_replay_buffer.episodes
            sampled = algo.local_replay_buffer.sample(
                num_items=64, n_step=1, gamma=config.gamma, sample_episodes=True
            )
            learner: Any = algo.learner_group._learner
            theirs = learner._learner_connector(
                rl_module=learner.module, batch={}, episodes=sampled, shared_data={},
                metrics=learner.metrics,
            )[DEFAULT_MODULE_ID]  # fmt: skip
        finally:
            algo.stop()
    ours = TransitionReplayBuffer(10_000, seed=0)
    ours.add(episodes)
    mine = ours.sample(64)
    assert set(theirs) == set(mine) | {"n_step"}  # RLlib's n-step column: always 1 here
    for column in mine:
        for their_leaf, my_leaf in zip(_leaves(theirs[column]), _leaves(mine[column]), strict=True):
            assert their_leaf.shape == my_leaf.shape, column
    rows = _all_rows(ours)
    for i in range(64):
        assert _row(theirs, i) in rows


def _leaves(value: Any) -> list[np.ndarray]:
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _leaves(value[key])]
    return [np.asarray(value)]


def _row(batch: dict[str, Any], i: int) -> bytes:
    columns = (Columns.OBS, Columns.NEXT_OBS, Columns.ACTIONS, Columns.REWARDS, Columns.TERMINATEDS)
    parts = [
        leaf[i].astype(np.float64).round(5).tobytes() for c in columns for leaf in _leaves(batch[c])
    ]
    return b"|".join(parts)


def _all_rows(buffer: TransitionReplayBuffer) -> set[bytes]:
    state = buffer.get_state()["columns"]
    batch: dict[str, Any] = {}
    for column, arrays in state.items():
        batch[column] = arrays[0] if len(arrays) == 1 else dict(enumerate(arrays))
    return {_row(batch, i) for i in range(len(buffer))}


def test_used_where_rllibs_buffer_would_replay_the_same() -> None:
    def config(name: str) -> Any:
        return load_experiment(ROOT / "experiments" / f"{name}.py").config.copy(copy_frozen=False)

    assert uses_transition_replay(config("maddpg_tag")) and uses_transition_replay(
        config("qmix_spread")
    )
    assert not uses_transition_replay(QMIXConfig())  # DQN's default: prioritized replay
    prioritized = {"type": "PrioritizedEpisodeReplayBuffer", "capacity": 10}
    fallback = config("maddpg_tag").training(replay_buffer_config=prioritized)
    assert not uses_transition_replay(fallback)
    assert not uses_transition_replay(config("qmix_spread").training(n_step=3))
    assert not uses_transition_replay(config("qmix_spread").training(transition_replay=False))
    insisted = config("maddpg_tag").training(
        replay_buffer_config=prioritized, transition_replay=True
    )
    with pytest.raises(ValueError, match="transition_replay=False"):
        insisted.validate()


def test_not_used_where_the_batches_would_skip_a_learner_connector_or_a_module_state() -> None:
    """The batches reach the learner ready-made: a learner connector the config sets would
    never run, and one-step rows cannot feed a stateful (recurrent) module."""
    spread = load_experiment(ROOT / "experiments" / "qmix_spread.py").config.copy(copy_frozen=False)
    assert not uses_transition_replay(spread, stateful_module=True)
    connected = spread.training(learner_connector=lambda *spaces: [])
    assert not uses_transition_replay(connected)
    with pytest.raises(ValueError, match="runs no learner connector"):
        connected.training(transition_replay=True).validate()
