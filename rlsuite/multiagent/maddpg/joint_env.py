"""A parallel multi-agent env as one RLlib agent that keeps every agent's reward.

    config.environment(**joint("mpe/simple_spread", {"continuous_actions": True}))

MADDPG's and MASAC's critics train on joint transitions: every agent's observation and
action at the same env step. RLlib 2.60's `MultiAgentEpisodeReplayBuffer` samples each
module's agent steps independently (its "synchronized" mode returns an old-stack batch
that new-stack learner connectors do not take), so, as QMIX does (`qmix/team_env.py`),
the agents play as one RLlib agent, and RLlib's `EpisodeReplayBuffer`, connectors,
checkpoints and metrics work unchanged. Unlike QMIX's `TeamEnv`, this one
- takes continuous (`Box`) as well as discrete actions: the joint action is a `Box` of
  shape (n_agents, action_dim), or `MultiDiscrete([n_actions] * n_agents)`;
- keeps each agent's reward, which MADDPG's per-agent critics (and competitive games such
  as simple_tag) need: the replay buffer stores one scalar reward per step, so the
  agents' rewards of a step ride in the observation that step leads to
  (`obs["agent_rewards"]`; the learner reads them from the next observation, hence n_step
  = 1). The scalar reward is their sum: the team return of cooperative tasks.

Observations are padded with zeros to the longest agent's (simple_tag's prey sees 14
numbers, its hunters 16); an agent absent from a step observes zeros.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from rlsuite import envs
from rlsuite.errors import UsageError

JOINT_OF = "joint_of"  # env_config key: the multi-agent env the agents play
JOINT_PREFIX = "joint/"  # Tune name of a joint env: joint/<its multi-agent env>
OBS = "obs"
AGENT_REWARDS = "agent_rewards"


@dataclass(frozen=True)
class JointSpec:
    """What the actors and critics are built for: the agents in the env's fixed order."""

    agents: tuple[str, ...]
    obs_dim: int
    action_space: gym.spaces.Box | gym.spaces.Discrete


def joint(env: str | type, env_config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Keyword arguments of `AlgorithmConfig.environment()`: `env` (a parallel multi-agent
    env) as one agent, registered with Tune as `joint/<env>` (RLlib's own `register_env`,
    so checkpoint restores and `rlsuite.evaluate` build it from its name alone)."""
    from ray.tune.registry import register_env

    name = JOINT_PREFIX + envs.display_name(env)
    register_env(name, JointCreator(env))
    return {"env": name, "env_config": dict(env_config or {})}


@dataclass(frozen=True)
class JointCreator:
    """A picklable `register_env` creator: `env`'s joint env with RLlib's `env_config`."""

    env: str | type

    def __call__(self, env_config: Mapping[str, Any] | None = None) -> JointEnv:
        return JointEnv({**dict(env_config or {}), JOINT_OF: self.env})


class JointEnv(gym.Env):
    """All agents of a parallel multi-agent env as one agent (see the module docstring)."""

    def __init__(self, env_config: Mapping[str, Any] | None = None) -> None:
        config = dict(env_config or {})
        if JOINT_OF not in config:
            raise UsageError(
                f"JointEnv needs env_config['{JOINT_OF}'], the multi-agent env; use "
                ".environment(**rlsuite.multiagent.maddpg.joint('mpe/simple_spread'))"
            )
        inner = config.pop(JOINT_OF)
        # By name, before building: a wrapper (e.g. smoke's move limit) hides the kind.
        if envs.is_turn_based(inner, config):
            raise UsageError(
                f"{envs.display_name(inner)} is turn-based; MADDPG and MASAC need every "
                "agent to act at every step (a parallel env such as mpe/simple_spread)"
            )
        self.env: Any = envs.make(inner, config)
        self.spec_joint = joint_spec(self.env, envs.display_name(inner))
        n, spec = len(self.spec_joint.agents), self.spec_joint
        self.observation_space = gym.spaces.Dict(
            {
                OBS: gym.spaces.Box(-np.inf, np.inf, (n, spec.obs_dim), np.float32),
                AGENT_REWARDS: gym.spaces.Box(-np.inf, np.inf, (n,), np.float32),
            }
        )
        self.action_space = _joint_action_space(spec.action_space, n)
        self.render_mode = getattr(self.env, "render_mode", None)
        self.metadata = dict(getattr(self.env, "metadata", {}) or {})
        self._alive: list[str] = []

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        observations, _ = self.env.reset(seed=seed, options=options)
        return self._joint_obs(observations, {}), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        agents = self.spec_joint.agents
        actions = {agent: _agent_action(action[agents.index(agent)]) for agent in self._alive}
        observations, rewards, terminateds, truncateds, _ = self.env.step(actions)
        joint_obs = self._joint_obs(observations, rewards)
        reward = float(joint_obs[AGENT_REWARDS].sum())
        terminated = bool(terminateds.get("__all__", False))
        truncated = bool(truncateds.get("__all__", False))
        return joint_obs, reward, terminated, truncated, {}

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def _joint_obs(
        self, observations: Mapping[str, Any], rewards: Mapping[str, Any]
    ) -> dict[str, np.ndarray]:
        agents = self.spec_joint.agents
        obs = np.zeros((len(agents), self.spec_joint.obs_dim), np.float32)
        agent_rewards = np.zeros(len(agents), np.float32)
        for i, agent in enumerate(agents):
            if agent in observations:
                flat = np.asarray(observations[agent], np.float32).reshape(-1)
                obs[i, : flat.size] = flat
            agent_rewards[i] = float(rewards.get(agent, 0.0))
        self._alive = [agent for agent in agents if agent in observations]
        return {OBS: obs, AGENT_REWARDS: agent_rewards}


def joint_spec(env: Any, name: str) -> JointSpec:
    """The agents' sizes, or UsageError for an env MADDPG/MASAC cannot take."""
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    if not isinstance(env, MultiAgentEnv):
        raise UsageError(f"{name} is a single-agent env; MADDPG and MASAC train multi-agent envs")
    agents = tuple(str(agent) for agent in env.possible_agents)
    for agent in agents:
        _check_vector_observation(name, agent, env.get_observation_space(agent))
    obs_dim = max(gym.spaces.flatdim(env.get_observation_space(a)) for a in agents)
    return JointSpec(agents, obs_dim, _shared_action_space(env, agents, name))


def _check_vector_observation(name: str, agent: str, space: gym.Space) -> None:
    # The actors and critics are MLPs on flat vectors; a CNN encoder per agent (and
    # pixels of every agent in the critic) is not built here.
    if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
        raise UsageError(
            f"agent '{agent}' of {name} observes {space}; MADDPG and MASAC take flat vector "
            "observations only (image observations need an encoder, which they do not build)"
        )


def _shared_action_space(
    env: Any, agents: tuple[str, ...], name: str
) -> gym.spaces.Box | gym.spaces.Discrete:
    spaces = [env.get_action_space(agent) for agent in agents]
    first = spaces[0]
    if not isinstance(first, gym.spaces.Box | gym.spaces.Discrete) or (
        isinstance(first, gym.spaces.Box) and len(first.shape) != 1
    ):
        raise UsageError(
            f"agent '{agents[0]}' of {name} has {first} actions; MADDPG and MASAC take "
            "Discrete or flat Box actions"
        )
    for agent, space in zip(agents, spaces, strict=True):
        if space != first:
            raise UsageError(
                f"agents '{agents[0]}' and '{agent}' of {name} have different action spaces "
                f"({first} vs {space}); the joint action needs one space for every agent"
            )
    return first


def _joint_action_space(space: gym.Space, n_agents: int) -> gym.Space:
    if isinstance(space, gym.spaces.Discrete):
        return gym.spaces.MultiDiscrete([int(space.n)] * n_agents)
    assert isinstance(space, gym.spaces.Box)
    low = np.broadcast_to(space.low, (n_agents, *space.shape))
    high = np.broadcast_to(space.high, (n_agents, *space.shape))
    return gym.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)


def _agent_action(action: Any) -> Any:
    array = np.asarray(action)
    return int(array) if array.ndim == 0 else array.astype(np.float32)
