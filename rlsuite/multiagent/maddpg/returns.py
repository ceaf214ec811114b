"""Each agent's and each policy's return in a joint episode, for training metrics and for
`rlsuite.evaluate`.

The team plays as one RLlib agent (`JointEnv`), so RLlib's env runner logs one return:
the sum over every agent, which on simple_tag mixes the hunters' tags with the prey's
penalties. Each agent's reward of a step rides in the observation that step leads to
(`obs["agent_rewards"]`), so an episode's observations after its reset hold every
agent's return. `log_team_returns` logs them under the keys RLlib's multi-agent env
runner uses (`metrics.policy_return_mean(policy)`, `metrics.agent_return_mean(agent)`),
so stop criteria, an experiment's `metric`, trackers and TensorBoard take MADDPG's
per-team returns as they take MAPPO's per-policy ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlsuite import metrics
from rlsuite.multiagent.maddpg.joint_env import AGENT_REWARDS


@dataclass(frozen=True)
class JointReturns:
    """One episode's returns, per agent and per policy (the sum over its agents)."""

    agents: dict[str, float]
    policies: dict[str, float]


def joint_returns(
    chunks: Sequence[Any], agents: Sequence[str], agent_policies: Sequence[str]
) -> JointReturns:
    """Returns of an episode of `JointEnv` given as its `SingleAgentEpisode` chunks (RLlib
    cuts an episode that spans `sample()` calls), with `agents` in the env's order and
    `agent_policies` each one's policy."""
    totals = np.zeros(len(agents))
    for chunk in chunks:
        totals += _chunk_rewards(chunk, len(agents))
    per_agent = {agent: float(total) for agent, total in zip(agents, totals, strict=True)}
    per_policy: dict[str, float] = {}
    for agent, policy in zip(agents, agent_policies, strict=True):
        per_policy[policy] = per_policy.get(policy, 0.0) + per_agent[agent]
    return JointReturns(per_agent, per_policy)


def _chunk_rewards(chunk: Any, n_agents: int) -> np.ndarray:
    # Index 0 is the reset's observation (no rewards) or the previous chunk's last,
    # already counted there: the chunk's own steps led to observations 1 to len.
    total = np.zeros(n_agents)
    for index in range(1, len(chunk) + 1):
        total += np.asarray(chunk.get_observations(index)[AGENT_REWARDS], dtype=np.float64)
    return total


def log_team_returns(
    *,
    episode: Any,
    env_runner: Any,
    metrics_logger: Any,
    env: Any,
    env_index: int,
    rl_module: Any,
    prev_episode_chunks: Sequence[Any] | None = None,
    **kwargs: Any,
) -> None:
    """RLlib `on_episode_end` callback (MADDPG's and MASAC's default): the finished
    episode's return per agent and per policy, averaged over the episodes RLlib averages
    `episode_return_mean` over."""
    agents = env.get_attr("spec_joint")[env_index].agents  # `env`: the runner's vector env
    chunks = [*(prev_episode_chunks or []), episode]
    returns = joint_returns(chunks, agents, rl_module.agent_policies)
    metrics_logger.log_dict(
        {
            metrics.AGENT_RETURN_MEAN_KEY: returns.agents,
            metrics.POLICY_RETURN_MEAN_KEY: returns.policies,
        },
        window=_window(env_runner.config),
    )


def _window(config: Any) -> int:
    # RLlib's own: each of n env runners keeps 1/n of the episodes the mean is over.
    return max(
        1, math.ceil(config.metrics_num_episodes_for_smoothing / (config.num_env_runners or 1))
    )
