"""A cooperative multi-agent env as one RLlib agent: the team.

    config.environment(**grouped("mpe/simple_spread"))  # env "team/mpe/simple_spread"

`TeamEnv` wraps a parallel multi-agent env (an RLlib `MultiAgentEnv`, e.g. a registry
PettingZoo env, or RLlib's `TwoStepGame`) into a single-agent gymnasium env:
- observation `{"obs": (n_agents, obs_dim), "state": (state_dim,), "action_mask":
  (n_agents, n_actions)}`: every agent's flattened observation (zero-padded to the longest;
  an agent absent this step observes zeros), the global state, and PettingZoo's
  `action_mask` where an agent's observation holds one (else every action is available);
- action: the joint action, `MultiDiscrete([n_actions] * n_agents)`;
- reward: the sum of the agents' rewards. QMIX and VDN learn one Q_tot for one team
  reward; the sum is the suite's team return (`metrics.TEAM_RETURN_MEAN`) and, for envs
  that hand every agent a share of a global reward (TwoStepGame gives each half),
  the global reward itself.

One agent keeps RLlib's single-agent episodes, `EpisodeReplayBuffer`s and connectors
as they are: a replayed transition is one joint env step (all observations, the joint
action, the state), which is what the mixer's TD target needs. RLlib's own grouping
(`MultiAgentEnv.with_agent_groups`) gives Tuple spaces per group, which its new-stack
connectors and buffers do not take apart; this wrapper is what RLlib lacks for that.

The global state is `state="obs"` (all agents' observations, concatenated: MAPPO's and
PyMARL's choice on MPE) or `state="env"` (the env's own: PettingZoo's `state()`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from rlsuite import envs
from rlsuite.errors import UsageError

TEAM_OF = "team_of"  # env_config key: the multi-agent env the team plays
STATE = "state"  # env_config key: where the global state comes from
TEAM_PREFIX = "team/"  # Tune name of a grouped env: team/<its multi-agent env>
STATE_SOURCES = ("obs", "env")
MASK = "action_mask"


@dataclass(frozen=True)
class TeamSpec:
    """What the Q networks and the mixer are built for."""

    agents: tuple[Any, ...]
    obs_dim: int
    n_actions: int
    state_dim: int

    @property
    def n_agents(self) -> int:
        return len(self.agents)


def grouped(
    env: str | type, env_config: Mapping[str, Any] | None = None, state: str = "obs"
) -> dict[str, Any]:
    """Keyword arguments of `AlgorithmConfig.environment()`: `env` (a parallel
    multi-agent env: registry name, `register_env` name or class) played as one team.

    The team env is registered with Tune under `team/<env>` (RLlib's own `register_env`,
    the one side effect an experiment file may have), so that it builds from its name
    alone, as checkpoint restores and `rlsuite.evaluate` build envs; `env_config` (with
    the `state` choice in it) still goes to the inner env, so `--set environment.env_config`
    edits it."""
    from ray.tune.registry import register_env

    name = TEAM_PREFIX + envs.display_name(env)
    register_env(name, TeamCreator(env))
    return {"env": name, "env_config": {STATE: state, **(env_config or {})}}


def team_env(
    env: str | type, env_config: Mapping[str, Any] | None = None, state: str = "obs"
) -> TeamEnv:
    """The team env of `env`, built here (tests, scripts)."""
    return TeamEnv({TEAM_OF: env, STATE: state, **(env_config or {})})


@dataclass(frozen=True)
class TeamCreator:
    """A picklable `register_env` creator: `env`'s team with RLlib's `env_config`."""

    env: str | type

    def __call__(self, env_config: Mapping[str, Any] | None = None) -> TeamEnv:
        return TeamEnv({**dict(env_config or {}), TEAM_OF: self.env})


class TeamEnv(gym.Env):
    """The team of a parallel multi-agent env as one agent (see the module docstring)."""

    def __init__(self, env_config: Mapping[str, Any] | None = None) -> None:
        config = dict(env_config or {})
        if TEAM_OF not in config:
            raise UsageError(
                f"TeamEnv needs env_config['{TEAM_OF}'], the multi-agent env of the team; "
                "use .environment(**rlsuite.multiagent.qmix.grouped('mpe/simple_spread'))"
            )
        inner, self.state_source = config.pop(TEAM_OF), str(config.pop(STATE, "obs"))
        name = envs.display_name(inner)
        self.env: Any = envs.make(inner, config)
        self.spec_team = team_spec(self.env, name, self.state_source)
        n, spec = self.spec_team.n_agents, self.spec_team
        self.observation_space = gym.spaces.Dict(
            {
                "obs": gym.spaces.Box(-np.inf, np.inf, (n, spec.obs_dim), np.float32),
                STATE: gym.spaces.Box(-np.inf, np.inf, (spec.state_dim,), np.float32),
                MASK: gym.spaces.Box(0.0, 1.0, (n, spec.n_actions), np.float32),
            }
        )
        self.action_space = gym.spaces.MultiDiscrete([spec.n_actions] * n)
        self.render_mode = getattr(self.env, "render_mode", None)
        self.metadata = dict(getattr(self.env, "metadata", {}) or {})
        self._alive: list[Any] = []

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        observations, _ = self.env.reset(seed=seed, options=options)
        return self._team_obs(observations), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        index = {agent: i for i, agent in enumerate(self.spec_team.agents)}
        joint = {agent: int(action[index[agent]]) for agent in self._alive}
        observations, rewards, terminateds, truncateds, _ = self.env.step(joint)
        reward = float(sum(float(r) for r in rewards.values()))
        terminated = bool(terminateds.get("__all__", False))
        truncated = bool(truncateds.get("__all__", False))
        return self._team_obs(observations), reward, terminated, truncated, {}

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def _team_obs(self, observations: Mapping[Any, Any]) -> dict[str, np.ndarray]:
        spec = self.spec_team
        obs = np.zeros((spec.n_agents, spec.obs_dim), np.float32)
        mask = np.ones((spec.n_agents, spec.n_actions), np.float32)
        for i, agent in enumerate(spec.agents):
            if agent in observations:
                flat, agent_mask = _split(
                    self.env.get_observation_space(agent), observations[agent]
                )
                obs[i, : flat.size] = flat
                if agent_mask is not None:
                    mask[i] = agent_mask
        self._alive = [agent for agent in spec.agents if agent in observations]
        state = obs.reshape(-1) if self.state_source == "obs" else _env_state(self.env)
        return {"obs": obs, STATE: state.astype(np.float32), MASK: mask}


def team_spec(env: Any, name: str, state_source: str) -> TeamSpec:
    """The team's sizes, or UsageError for an env that QMIX/VDN cannot group."""
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    if not isinstance(env, MultiAgentEnv):
        raise UsageError(f"{name} is a single-agent env; QMIX and VDN group a multi-agent team")
    if envs.outside.is_turn_based(env):
        raise UsageError(
            f"{name} is turn-based; QMIX and VDN need every agent to act at every step "
            "(a parallel env such as mpe/simple_spread)"
        )
    # Older-style envs (TwoStepGame) set only `_agent_ids`; `get_agent_ids()` is deprecated.
    agents = tuple(env.possible_agents or sorted(getattr(env, "_agent_ids", ())))
    n_actions = _shared_actions(env, agents, name)
    obs_dim = max(_obs_dim(env.get_observation_space(agent)) for agent in agents)
    return TeamSpec(
        agents, obs_dim, n_actions, _state_dim(env, name, state_source, agents, obs_dim)
    )


def _shared_actions(env: Any, agents: tuple[Any, ...], name: str) -> int:
    spaces = {agent: env.get_action_space(agent) for agent in agents}
    for agent, space in spaces.items():
        if not isinstance(space, gym.spaces.Discrete):
            raise UsageError(
                f"agent '{agent}' of {name} has {space} actions; QMIX and VDN take discrete "
                "actions only (use SAC or PPO for continuous ones)"
            )
    sizes = {int(space.n) for space in spaces.values()}
    if len(sizes) > 1:
        raise UsageError(
            f"the agents of {name} have different action spaces ({sorted(sizes)} actions); "
            "QMIX and VDN share one Q network, which needs the same actions for every agent"
        )
    return sizes.pop()


def _state_dim(env: Any, name: str, source: str, agents: tuple[Any, ...], obs_dim: int) -> int:
    if source not in STATE_SOURCES:
        raise UsageError(f"unknown global state '{source}'; use one of {', '.join(STATE_SOURCES)}")
    if source == "obs":
        return len(agents) * obs_dim
    space = getattr(getattr(env, "par_env", env), "state_space", None)
    if not isinstance(space, gym.spaces.Box):
        raise UsageError(
            f"{name} provides no global state (no PettingZoo state_space/state()); "
            "use grouped(..., state='obs'), all agents' observations"
        )
    return int(np.prod(space.shape))


def _env_state(env: Any) -> np.ndarray:
    return np.asarray(getattr(env, "par_env", env).state(), np.float32).reshape(-1)


def _obs_dim(space: gym.Space) -> int:
    if isinstance(space, gym.spaces.Dict) and MASK in space.spaces:
        return sum(gym.spaces.flatdim(s) for k, s in space.spaces.items() if k != MASK)
    return int(gym.spaces.flatdim(space))


def _split(space: gym.Space, observation: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """(flat observation, action mask or None) of one agent."""
    if isinstance(space, gym.spaces.Dict) and MASK in space.spaces:
        parts = [
            np.asarray(gym.spaces.flatten(s, observation[k]), np.float32)
            for k, s in space.spaces.items()
            if k != MASK
        ]
        return np.concatenate(parts).astype(np.float32), np.asarray(observation[MASK], np.float32)
    return np.asarray(gym.spaces.flatten(space, observation), np.float32), None
