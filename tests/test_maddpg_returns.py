"""Per-agent and per-policy returns of MADDPG's joint episodes
(rlsuite.multiagent.maddpg.returns), read from the rewards `JointEnv` keeps in its
observations, and the callback that logs them while training. A real run's logged and
evaluated returns are checked in tests/test_evaluate_maddpg.py."""

from __future__ import annotations

from typing import Any

import pytest
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from rlsuite import envs
from rlsuite.multiagent.maddpg import JointEnv, MADDPGConfig, MASACConfig
from rlsuite.multiagent.maddpg.joint_env import AGENT_REWARDS, JOINT_OF
from rlsuite.multiagent.maddpg.returns import joint_returns, log_team_returns

ENV = "mpe/simple_tag"
STEPS = 60
CUT_AFTER = 32  # steps in the first chunk: with seed 3 the hunters tag at steps 31 to 33
POLICIES = ("adversary", "adversary", "adversary", "agent")  # by_type on simple_tag


def test_returns_add_each_agents_rewards_over_episode_chunks() -> None:
    """Against the multi-agent env's own rewards, stepped alongside with the same actions;
    the episode is cut in two as RLlib cuts one that spans two `sample()` calls (both
    chunks hold the observation at the cut, and the rewards in it), and the first chunk is
    numpy'd as the env runner returns it."""
    env_config = {"max_episode_steps": STEPS}
    env = JointEnv({JOINT_OF: ENV, **env_config})
    inner = envs.make(ENV, env_config)
    agents = env.spec_joint.agents
    obs, infos = env.reset(seed=3)
    inner.reset(seed=3)
    env.action_space.seed(3)
    episode = SingleAgentEpisode(
        observation_space=env.observation_space, action_space=env.action_space
    )
    episode.add_env_reset(observation=obs, infos=infos)
    chunks: list[Any] = []
    expected = dict.fromkeys(agents, 0.0)
    for step in range(1, STEPS + 1):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, info = env.step(action)
        _, rewards, _, _, _ = inner.step({a: int(action[i]) for i, a in enumerate(agents)})
        for agent in agents:
            expected[agent] += float(rewards[agent])
        episode.add_env_step(
            obs, action, reward, infos=info, terminated=terminated, truncated=truncated
        )
        if step == CUT_AFTER:
            assert obs[AGENT_REWARDS].any()  # counted twice, it would show
            successor = episode.cut()
            chunks.append(episode.to_numpy())
            episode = successor
    chunks.append(episode)
    assert episode.is_done and expected["adversary_0"] > 0 > expected["agent_0"]

    returns = joint_returns(chunks, agents, POLICIES)

    assert returns.agents == pytest.approx(expected, abs=1e-4)
    hunters = sum(expected[a] for a, p in zip(agents, POLICIES, strict=True) if p == "adversary")
    assert returns.policies == pytest.approx({"adversary": hunters, "agent": expected["agent_0"]})
    env.close()
    inner.close()


@pytest.mark.parametrize("config_class", [MADDPGConfig, MASACConfig])
def test_team_returns_are_logged_whatever_episode_end_callbacks_the_user_adds(
    config_class: type,
) -> None:
    def users_own(**kwargs: Any) -> None:
        pass

    config = config_class()
    assert config.callbacks_on_episode_end == [log_team_returns]
    config.callbacks(on_episode_end=users_own)
    assert config.callbacks_on_episode_end == [log_team_returns, users_own]
    config.callbacks(on_episode_end=[log_team_returns, users_own])  # the list read back
    assert config.callbacks_on_episode_end == [log_team_returns, users_own]
    config.callbacks(on_episode_end=None)
    assert config.callbacks_on_episode_end == [log_team_returns]
    assert config.copy().callbacks_on_episode_end == [log_team_returns]
