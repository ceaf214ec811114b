"""What `POST /act` computes, checked in this process on `ServedPolicy` (no server): on
checkpoints of Algorithms built for the case and saved untrained, a self-play one
(experiments/selfplay_connect4.py at smoke size) and a CartPole one whose env-to-module
connectors normalize (MeanStdFilter) and stack frames. tests/test_serve.py and
test_serve_sessions.py serve trained checkpoints over HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module import MeanStdFilter
from ray.rllib.connectors.env_to_module.frame_stacking import FrameStackingEnvToModule
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.tune import register_env

from rlsuite import envs
from rlsuite.launcher.loader import load_experiment
from rlsuite.multiagent.matches import module_player
from rlsuite.multiagent.selfplay import LEARNER
from rlsuite.serving import sessions
from rlsuite.serving.inputs import BadRequest
from rlsuite.serving.policies import ServedPolicy, to_json
from tests.helpers import ROOT, local_ray
from tests.selfplay_helpers import selfplay_algorithm
from tests.serve_client import refused

SELFPLAY = ROOT / "experiments" / "selfplay_connect4.py"
IMAGE_CARTPOLE = "image_cartpole"  # CartPole's (4,) observations as a 2x2 image to stack
JSON = "application/json"


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    with local_ray():
        yield


@pytest.fixture(scope="module")
def selfplay_checkpoint(ray_session: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with selfplay_algorithm(load_experiment(SELFPLAY).config) as algorithm:
        return Path(algorithm.save_to_path(str(tmp_path_factory.mktemp("selfplay"))))


def _image_cartpole(config: Any) -> gym.Env:
    return gym.wrappers.ReshapeObservation(gym.make("CartPole-v1"), (2, 2, 1))


def _normalize_and_stack(env: Any, spaces: Any = None, device: Any = None) -> list[Any]:
    return [MeanStdFilter(), FrameStackingEnvToModule(num_frames=2)]


@pytest.fixture(scope="module")
def stacking_checkpoint(ray_session: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    register_env(IMAGE_CARTPOLE, _image_cartpole)
    config = (
        PPOConfig()
        .environment(IMAGE_CARTPOLE)
        .env_runners(num_env_runners=0, env_to_module_connector=_normalize_and_stack)
        .rl_module(model_config=DefaultModelConfig(conv_filters=[[4, [2, 2], 1]]))  # 2x2x2 in
    )
    algorithm = config.build_algo()
    try:
        return Path(algorithm.save_to_path(str(tmp_path_factory.mktemp("stacking"))))
    finally:
        algorithm.stop()


def test_self_play_is_served_by_the_learner(selfplay_checkpoint: Path) -> None:
    """The run's mapping seats a random or heuristic pool member in about half of its
    episodes, and a sessionless request is an episode: every agent must be the learner."""
    served = ServedPolicy(selfplay_checkpoint, explore=False)
    assert served.describe()["policy"] == LEARNER
    env = envs.make("classic/connect_four")
    env.reset(seed=0)
    env.step({"player_0": 3})
    observations, *_ = env.step({"player_1": 2})
    env.close()
    board = observations["player_0"]
    rng = np.random.default_rng(0)
    (expected,) = module_player(served.policy.module[LEARNER])([board], rng)
    requests = 20  # an untrained learner and a random pool member agree in 1 of 7 moves
    for seat in ("player_0", "player_1"):
        body = json.dumps({"observations": {seat: to_json(board)}}).encode()
        steps = served.parse(body, JSON) * requests  # each one a new episode, a new draw
        assert [actions[seat] for actions in served.predict(steps)] == [expected] * requests


def test_a_session_the_replica_does_not_hold_is_refused(stacking_checkpoint: Path) -> None:
    """With frames stacked, a fresh episode for an unknown session would act on frames the
    client never sent: it is told to start one. Sessionless requests are served as before."""
    served = ServedPolicy(stacking_checkpoint, explore=False)
    assert served.session_state == ["the connector FrameStacking"]

    def body(**session: Any) -> bytes:
        return json.dumps(
            {"observations": [[[[0.01], [0.02]], [[0.03], [0.04]]]], **session}
        ).encode()

    with pytest.raises(BadRequest, match=r"^unknown session 's1' .*; send \"reset\": true"):
        served.parse(body(session_id="s1"), JSON)
    served.predict(served.parse(body(session_id="s1", reset=True), JSON))
    served.predict(served.parse(body(session_id="s1"), JSON))
    served.predict(served.parse(body(), JSON))


def test_a_replica_keeps_fewer_sessions_of_large_observations(
    stacking_checkpoint: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions are capped by their observations' bytes as well as by count: 10,000
    sessions of Atari frames would hold 54 GB. Past the cap the least recently used goes."""
    frames = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    assert sessions.session_limit(frames) == (1 << 30) // (84 * 84 * 4 * 193) == 197
    assert sessions.session_limit(gym.spaces.Box(-1, 1, (4,), np.float32)) == 10_000
    monkeypatch.setattr(sessions, "SESSION_BYTES", 2 * 193 * 16)  # two of 2x2x1 float32
    served = ServedPolicy(stacking_checkpoint, explore=False)
    assert served.max_sessions == 2

    def act(session_id: str, reset: bool = False) -> None:
        observation = [[[[0.01], [0.02]], [[0.03], [0.04]]]]
        body = {"observations": observation, "session_id": session_id, "reset": reset}
        served.predict(served.parse(json.dumps(body).encode(), JSON))

    for name in ("s1", "s2", "s3"):
        act(name, reset=True)
    assert list(served.sessions) == ["s2", "s3"]
    act("s3")
    with pytest.raises(BadRequest, match=r"^unknown session 's1' .* least recently used of 2\)"):
        act("s1")


def test_a_client_ends_its_session(stacking_checkpoint: Path) -> None:
    """`{"session_id": ID, "end": true}` frees the session at once (its episode ended),
    instead of leaving it to age out; the id is then unknown, as one never started."""
    served = ServedPolicy(stacking_checkpoint, explore=False)
    observation = [[[[0.01], [0.02]], [[0.03], [0.04]]]]

    def parse(**body: Any) -> list[Any]:
        return served.parse(json.dumps(body).encode(), JSON)

    served.predict(parse(observations=observation, session_id="s1", reset=True))
    assert list(served.sessions) == ["s1"]
    steps = parse(session_id="s1", end=True)
    assert steps == [] and not served.sessions and served.answer([]) == {"ended": True}
    with pytest.raises(BadRequest, match=r"^unknown session 's1'"):
        parse(observations=observation, session_id="s1")
    refusals = [
        ({"end": True}, '"end": true needs the "session_id"'),
        ({"session_id": "s1", "end": "yes"}, '"end" must be true or false'),
        ({"session_id": "s1", "end": True, "observations": observation}, 'without "observations"'),
        ({"session_id": "s1", "end": True, "reset": True}, 'without "observations" or "reset"'),
    ]
    for body, needle in refusals:
        with pytest.raises(BadRequest, match=re.escape(needle)):
            parse(**body)


def test_replicas_are_refused_where_a_connector_keeps_session_state(
    stacking_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Serve's router spreads a session's requests over the replicas; its frames are in one."""
    line = refused(capsys, stacking_checkpoint, "--replicas", "2")
    assert "(the connector FrameStacking)" in line and line.endswith("serve it with --replicas 1")
    assert "MeanStdFilter" not in line  # its statistics are shared, not per session


def test_the_mean_std_filter_keeps_its_trained_statistics(stacking_checkpoint: Path) -> None:
    """One client's observations must not move the normalization of another's."""
    served = ServedPolicy(stacking_checkpoint, explore=False)
    (normalize,) = [
        c for c in served.policy.env_to_module.connectors if isinstance(c, MeanStdFilter)
    ]

    def statistics() -> list[Any]:
        return [stat for agent in normalize.get_state().values() for stat in agent["running_stats"]]

    trained = statistics()
    observations = np.random.default_rng(0).normal(0.0, 5.0, (8, 2, 2, 1)).tolist()
    served.predict(served.parse(json.dumps({"observations": observations}).encode(), JSON))
    assert statistics() == trained
