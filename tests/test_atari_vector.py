"""The fast Atari path (ale-py's AtariVectorEnv) against the standard wrappers."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from rlsuite import envs

NO_NOOPS = {"noop_max": 0}  # deterministic starts, so both paths play the same frames


def vector(game: str, num_envs: int = 2, **config: object) -> gym.vector.VectorEnv:
    env = envs.make(f"atari/{game}", {"num_envs": num_envs, **config})
    assert isinstance(env, gym.vector.VectorEnv)
    return env


def test_spaces_match_the_standard_wrappers() -> None:
    fast, standard = vector("pong"), envs.make("atari/pong")
    assert fast.single_observation_space == standard.observation_space
    assert fast.single_action_space == standard.action_space
    observations, _ = fast.reset(seed=0)
    assert observations.shape == (2, 84, 84, 4) and observations.dtype == np.float32
    assert observations.min() >= 0.0 and observations.max() <= 1.0


def test_frames_equal_the_standard_wrappers_bit_for_bit() -> None:
    # Freeway has no FIRE: both paths then start the same way (ALE's FIRE reset is one
    # frame where RLlib's FireResetEnv takes two steps).
    fast, standard = vector("freeway", **NO_NOOPS), envs.make("atari/freeway", NO_NOOPS)
    fast_obs, _ = fast.reset(seed=0)
    standard_obs, _ = standard.reset(seed=0)
    np.testing.assert_array_equal(fast_obs[0], standard_obs)  # padding repeats the reset frame
    actions = np.random.default_rng(0).integers(3, size=(30, 2))
    for step_actions in actions:
        fast_obs, fast_rewards, *_ = fast.step(step_actions)
        standard_obs, standard_reward, *_ = standard.step(int(step_actions[0]))
        np.testing.assert_array_equal(fast_obs[0], standard_obs)
        assert fast_rewards[0] == standard_reward


def test_frames_stack_oldest_first() -> None:
    env = vector("pong")
    first, _ = env.reset(seed=0)
    second, *_ = env.step(np.zeros(2, dtype=np.int64))
    np.testing.assert_array_equal(second[..., :3], first[..., 1:])


def test_rewards_are_clipped_floats() -> None:
    env = vector("breakout", num_envs=4)  # scores 1, 4 and 7 points per brick
    env.reset(seed=0)
    rewards = np.concatenate(
        [env.step(env.action_space.sample())[1] for _ in range(400)]  # type: ignore[arg-type]
    )
    assert rewards.dtype == np.float32
    assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0} and rewards.max() == 1.0


def test_life_loss_does_not_end_the_episode() -> None:
    env = vector("breakout", num_envs=1)
    _, info = env.reset(seed=0)
    lives = int(info["lives"][0])
    terminated = False
    while not terminated and int(info["lives"][0]) == lives:
        _, _, (terminated,), _, info = env.step(np.zeros(1, dtype=np.int64))
    assert int(info["lives"][0]) == lives - 1 and not terminated


def test_time_limit_truncates_then_the_next_step_resets() -> None:
    env = vector("pong", max_episode_steps=20, **NO_NOOPS)
    env.reset(seed=0)
    stay = np.zeros(2, dtype=np.int64)
    truncations = [env.step(stay)[3].all() for _ in range(20)]
    assert truncations == [False] * 19 + [True]
    observations, rewards, terminations, truncated, _ = env.step(stay)
    # Gymnasium's next-step autoreset: this step returns the new episode's first frames.
    assert not truncated.any() and not terminations.any() and not rewards.any()
    for frame in range(3):
        np.testing.assert_array_equal(observations[..., frame], observations[..., 3])


def test_noop_starts_vary_the_first_frame() -> None:
    env = vector("breakout", num_envs=8)
    observations, _ = env.reset(seed=0)
    assert len({observation.tobytes() for observation in observations}) > 1


def test_other_envs_vectorize_side_by_side() -> None:
    env = envs.make("classic/pendulum", {"num_envs": 3, "max_episode_steps": 2})
    assert isinstance(env, gym.vector.SyncVectorEnv) and env.num_envs == 3
    env.reset(seed=0)
    truncations = [env.step(env.action_space.sample())[3].all() for _ in range(2)]
    assert truncations == [False, True]


def test_rllib_env_runner_samples_through_the_vector_entry_point() -> None:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    envs.register("atari/pong")
    config = (
        PPOConfig()
        .environment("atari/pong", env_config={"max_episode_steps": 10})
        .env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode="vector_entry_point")
        .rl_module(
            model_config=DefaultModelConfig(
                conv_filters=[[4, 8, 4], [8, 4, 2]], head_fcnet_hiddens=[8]
            )
        )
    )
    runner = SingleAgentEnvRunner(config=config)
    episodes = runner.sample(num_timesteps=30, random_actions=False)
    observations = np.concatenate([episode.get_observations() for episode in episodes])
    assert observations.shape[1:] == (84, 84, 4) and observations.dtype == np.float32
    assert sum(episode.is_truncated for episode in episodes) >= 2  # 10-step episodes ended
    runner.stop()
