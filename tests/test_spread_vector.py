"""The batched simple_spread (envs/spread_vector.py) is mpe2's simple_spread step for step,
and the suite's multi-agent runner samples with it the episodes RLlib's runner samples
with PettingZoo's envs."""

from __future__ import annotations

import numpy as np
import pytest
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

from rlsuite import envs
from rlsuite.envs.spread_vector import SpreadVectorEnv
from rlsuite.multiagent import shared
from rlsuite.multiagent.env_runner import BatchedCountsMultiAgentEnvRunner

ENV = "mpe/simple_spread"


@pytest.mark.parametrize("env_config", [{}, {"N": 4, "local_ratio": 0.2, "max_cycles": 7}])
def test_batched_steps_equal_pettingzoo_steps(env_config: dict) -> None:
    num_envs, seed = 16, 3
    batched = envs.batched_multi_agent(ENV, num_envs, env_config)
    assert isinstance(batched, SpreadVectorEnv)
    singles = [envs.make(ENV, env_config) for _ in range(num_envs)]
    # The spaces a remote runner reports for the local one to build its connectors from.
    assert batched.single_observation_space == singles[0].observation_space
    assert batched.single_action_space == singles[0].action_space
    observations, _ = batched.reset(seed=seed)
    expected = [env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]
    _assert_same(observations, expected)
    agents = batched.agents
    actions_rng = np.random.default_rng(0)
    done = [False] * num_envs
    collisions = episode_ends = 0
    for _ in range(60):  # episodes of 25 (or 7) steps: resets after the last step, twice or more
        actions = [
            {} if done[i] else {a: int(actions_rng.integers(5)) for a in agents}
            for i in range(num_envs)
        ]
        observations, rewards, terminateds, truncateds, _ = batched.step(actions)
        for i, env in enumerate(singles):
            if done[i]:  # RLlib's "next_step" autoreset: this step is the reset
                expected_obs = env.reset()[0]
                expected_rewards = dict.fromkeys(agents, 0.0)
                expected_truncated = False
            else:
                expected_obs, expected_rewards, _, truncated, _ = env.step(actions[i])
                expected_truncated = truncated["__all__"]
            _assert_same([observations[i]], [expected_obs])
            assert rewards[i] == expected_rewards
            assert terminateds[i] == {**dict.fromkeys(agents, False), "__all__": False}
            assert truncateds[i] == {
                **dict.fromkeys(agents, expected_truncated),
                "__all__": expected_truncated,
            }
            collisions += len(set(rewards[i].values())) > 1  # agents' own collision terms differ
            done[i] = expected_truncated
            episode_ends += expected_truncated
    assert collisions > 0, "no step had a collision: the contact force went untested"
    assert episode_ends >= 2 * num_envs


def _assert_same(observations: list[dict], expected: list[dict]) -> None:
    for ours, theirs in zip(observations, expected, strict=True):
        assert list(ours) == list(theirs)
        for agent, obs in ours.items():
            assert obs.dtype == np.float32
            np.testing.assert_array_equal(obs, theirs[agent])


@pytest.mark.parametrize(
    "env_config",
    [{"continuous_actions": True}, {"curriculum": True}, {"terminate_on_success": True}],
)
def test_options_the_batch_lacks_keep_pettingzoos_env(env_config: dict) -> None:
    assert envs.batched_multi_agent(ENV, 4, env_config) is None


def test_other_envs_have_no_batch() -> None:
    assert envs.batched_multi_agent("mpe/simple_tag", 4, {}) is None
    assert envs.batched_multi_agent("CartPole-v1", 4, {}) is None


def test_the_runner_samples_rllibs_episodes_with_the_batch() -> None:
    """Greedy actions of the same seeded module: our runner on the batch and RLlib's on
    PettingZoo's envs collect the same observations, actions and rewards."""
    envs.register(ENV)
    config = (
        PPOConfig()
        .environment(ENV, env_config={"max_episode_steps": 10})
        .multi_agent(**shared(ENV))
        .env_runners(num_envs_per_env_runner=4)
        .debugging(seed=0)
    )
    ours = BatchedCountsMultiAgentEnvRunner(config=config)
    rllib = MultiAgentEnvRunner(config=config)
    try:
        assert isinstance(ours.env, SpreadVectorEnv)
        assert not isinstance(rllib.env, SpreadVectorEnv)
        rllib.module.set_state(ours.module.get_state())
        ours_episodes = ours.sample(num_timesteps=60, explore=False)
        rllib_episodes = rllib.sample(num_timesteps=60, explore=False)
    finally:
        ours.stop()
        rllib.stop()
    assert len(ours_episodes) == len(rllib_episodes) > 4
    for mine, theirs in zip(ours_episodes, rllib_episodes, strict=True):
        for agent in ("agent_0", "agent_1", "agent_2"):
            mine_agent, theirs_agent = mine.agent_episodes[agent], theirs.agent_episodes[agent]
            np.testing.assert_array_equal(
                mine_agent.get_observations(), theirs_agent.get_observations()
            )
            np.testing.assert_array_equal(mine_agent.get_actions(), theirs_agent.get_actions())
            np.testing.assert_array_equal(mine_agent.get_rewards(), theirs_agent.get_rewards())
