"""Every registered env passes a check_env-style test; the Atari recipe does what it says."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from rlsuite import envs
from rlsuite.envs.atari import channels_last

NON_ATARI = [
    name
    for name in envs.names()
    if not name.startswith("atari/") and not envs.is_multi_agent(name)  # see test_multiagent_envs
]
ATARI_SAMPLE = ["atari/pong", "atari/breakout", "atari/space_invaders"]
ALL_ATARI = [name for name in envs.names() if name.startswith("atari/")]


def check_registered_env(name: str) -> None:
    env = envs.make(name)
    check_env(env.unwrapped, skip_render_check=True)
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation), name
    for _ in range(5):
        observation, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert env.observation_space.contains(observation), name
        assert np.isscalar(reward) and isinstance(terminated, bool) and isinstance(truncated, bool)
        if terminated or truncated:
            observation, _info = env.reset()
    env.close()


@pytest.mark.parametrize("name", NON_ATARI + ATARI_SAMPLE)
def test_registered_env_passes_checks(name: str) -> None:
    check_registered_env(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_ATARI)
def test_every_atari_game_passes_checks(name: str) -> None:
    check_registered_env(name)


def test_registry_covers_families() -> None:
    names = envs.names()
    assert {"classic/cartpole", "classic/pendulum", "mujoco/halfcheetah", "atari/pong"} <= set(
        names
    )
    assert len([n for n in names if n.startswith("atari/")]) > 50


def test_max_episode_steps_truncates_any_env() -> None:
    env = envs.make("classic/pendulum", {"max_episode_steps": 3})
    env.reset(seed=0)
    flags = [env.step(env.action_space.sample())[3] for _ in range(3)]
    assert flags == [False, False, True]


def test_env_config_reaches_gymnasium() -> None:
    env = envs.make("classic/pendulum", {"g": 3.0})
    assert env.unwrapped.g == 3.0  # type: ignore[attr-defined]


def test_unknown_env_suggests_close_names() -> None:
    with pytest.raises(envs.UnknownEnvError, match="classic/cartpole"):
        envs.creator("classic/cartpol")


class TestAtariPreprocessing:
    def test_observation_is_84x84_grey_four_frames_channels_last(self) -> None:
        env = envs.make("atari/pong")
        observation, _ = env.reset(seed=0)
        assert observation.shape == (84, 84, 4) and observation.dtype == np.float32
        assert observation.min() >= 0.0 and observation.max() <= 1.0
        assert env.observation_space.shape == (84, 84, 4)

    def test_frames_stack_oldest_first(self) -> None:
        env = envs.make("atari/pong")
        first, _ = env.reset(seed=0)
        second, *_ = env.step(0)
        np.testing.assert_array_equal(second[..., :3], first[..., 1:])

    def test_rewards_are_clipped(self) -> None:
        env = envs.make("atari/breakout")  # scores 1, 4 and 7 points per brick
        env.reset(seed=0)
        rewards = {env.step(env.action_space.sample())[1] for _ in range(400)}
        assert rewards <= {-1.0, 0.0, 1.0}

    def test_noop_starts_vary_the_first_frame(self) -> None:
        env = envs.make("atari/breakout")
        starts = {env.reset(seed=seed)[0].tobytes() for seed in range(8)}
        assert len(starts) > 1

    def test_sticky_actions_off_by_default_and_configurable(self) -> None:
        default = envs.make("atari/pong")
        sticky = envs.make("atari/pong", {"repeat_action_probability": 0.25})
        assert default.unwrapped.ale.getFloat("repeat_action_probability") == 0.0  # type: ignore[attr-defined]
        assert sticky.unwrapped.ale.getFloat("repeat_action_probability") == 0.25  # type: ignore[attr-defined]

    def test_life_loss_does_not_end_the_episode(self) -> None:
        env = envs.make("atari/breakout")
        env.reset(seed=0)
        lives = env.unwrapped.ale.lives()  # type: ignore[attr-defined]
        terminated = False
        while not terminated and env.unwrapped.ale.lives() == lives:  # type: ignore[attr-defined]
            _, _, terminated, _, _ = env.step(0)
        assert env.unwrapped.ale.lives() == lives - 1 and not terminated  # type: ignore[attr-defined]


def test_channels_last_moves_the_first_axis() -> None:
    space = gym.spaces.Box(0, 255, (3, 5, 7), np.uint8)
    env = channels_last(_ConstantEnv(space))
    observation, _ = env.reset()
    assert observation.shape == (5, 7, 3) and env.observation_space.shape == (5, 7, 3)
    np.testing.assert_array_equal(observation[..., 0], np.zeros((5, 7)))
    np.testing.assert_array_equal(observation[..., 2], np.full((5, 7), 2))


class _ConstantEnv(gym.Env):
    """Channel c of every observation holds the value c."""

    def __init__(self, space: gym.spaces.Box) -> None:
        self.observation_space = space
        self.action_space = gym.spaces.Discrete(2)
        channels = space.shape[0]
        self._obs = np.stack([np.full(space.shape[1:], c, space.dtype) for c in range(channels)])

    def reset(self, *, seed=None, options=None):  # type: ignore[override]
        return self._obs, {}

    def step(self, action):  # type: ignore[override]
        return self._obs, 0.0, False, False, {}
