"""Which agent trains which policy: the arguments of `AlgorithmConfig.multi_agent()`.

    config.multi_agent(**shared("mpe/simple_spread"))      # one policy for every agent
    config.multi_agent(**independent("mpe/simple_spread"))  # one policy per agent
    config.multi_agent(**by_type("mpe/simple_tag"))        # adversary_* and agent_* apart
    config.multi_agent(**table("mpe/simple_tag", {"adversary_0": "hunter", ...}))

Each helper checks its mapping against the env's agents and spaces at once and raises
UsageError naming the fix. The mapping functions are small picklable classes rather than
lambdas so that checks can read an explicit table back and name the agents it gets wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

import gymnasium as gym

from rlsuite import envs
from rlsuite.errors import UsageError

SHARED = "shared"

PolicyMappingFn = Callable[..., str]


class MultiAgentSettings(TypedDict):
    """Keyword arguments of `AlgorithmConfig.multi_agent()`."""

    policies: set[str]
    policy_mapping_fn: PolicyMappingFn


class AgentSpaces(NamedTuple):
    observation: gym.Space
    action: gym.Space


@dataclass(frozen=True)
class SharedPolicy:
    """Every agent acts and learns with one policy (parameter sharing)."""

    policy_id: str = SHARED

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        return self.policy_id


@dataclass(frozen=True)
class PolicyPerAgent:
    """Each agent has its own policy, named like the agent."""

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        return str(agent_id)


@dataclass(frozen=True)
class PolicyPerType:
    """Agents share a policy with the others of their type (`adversary_0` -> `adversary`)."""

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        return agent_type(str(agent_id))


@dataclass(frozen=True)
class PolicyTable:
    """An explicit agent id -> policy id table."""

    table: Mapping[str, str]

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        return self.table[agent_id]


def agent_type(agent_id: str) -> str:
    """The agent's name without its trailing index: `adversary_0` -> `adversary`."""
    return re.sub(r"_?\d+$", "", agent_id) or agent_id


def shared(
    env_name: str, env_config: Mapping[str, Any] | None = None, policy_id: str = SHARED
) -> MultiAgentSettings:
    """One policy for all agents; their spaces must match."""
    return _checked(env_name, env_config, {policy_id}, SharedPolicy(policy_id))


def independent(env_name: str, env_config: Mapping[str, Any] | None = None) -> MultiAgentSettings:
    """One policy per agent, named like the agent."""
    agents = agent_spaces(env_name, env_config)
    return _checked(env_name, env_config, set(agents), PolicyPerAgent(), agents)


def by_type(env_name: str, env_config: Mapping[str, Any] | None = None) -> MultiAgentSettings:
    """One policy per agent type (agent id without its index), e.g. per team."""
    agents = agent_spaces(env_name, env_config)
    types = {agent_type(agent) for agent in agents}
    return _checked(env_name, env_config, types, PolicyPerType(), agents)


def table(
    env_name: str, mapping: Mapping[str, str], env_config: Mapping[str, Any] | None = None
) -> MultiAgentSettings:
    """Policies as an explicit table from agent id to policy id."""
    return _checked(env_name, env_config, set(mapping.values()), PolicyTable(dict(mapping)))


def agent_spaces(
    env_name: str, env_config: Mapping[str, Any] | None = None
) -> dict[str, AgentSpaces]:
    """Every possible agent of the env, in the env's order, with its spaces."""
    if not envs.is_multi_agent(env_name, env_config):
        raise UsageError(
            f"{env_name} is not a multi-agent env; policy mappings need one of "
            f"{', '.join(n for n in envs.names() if envs.is_multi_agent(n))}"
        )
    env: Any = envs.make(env_name, env_config)
    try:
        return {
            agent: AgentSpaces(env.get_observation_space(agent), env.get_action_space(agent))
            for agent in env.possible_agents
        }
    finally:
        env.close()


def check_mapping(
    env_name: str,
    agents: Mapping[str, AgentSpaces],
    policies: Collection[str],
    policy_mapping_fn: PolicyMappingFn,
) -> None:
    """Every agent maps to one of `policies`, a table names only real agents, and agents
    sharing a policy have equal spaces; UsageError naming the fix otherwise."""
    if isinstance(policy_mapping_fn, PolicyTable):
        unknown = [agent for agent in policy_mapping_fn.table if agent not in agents]
        if unknown:
            raise UsageError(
                f"the policy mapping names agent '{unknown[0]}', which {env_name} does not have "
                f"(its agents: {', '.join(agents)}); fix the agent id in the mapping"
            )
        missing = [agent for agent in agents if agent not in policy_mapping_fn.table]
        if missing:
            raise UsageError(
                f"agent '{missing[0]}' of {env_name} has no policy in the mapping; add "
                f"'{missing[0]}': '<policy id>' to it"
            )
    members: dict[str, list[str]] = {}
    for agent in agents:
        policy = _policy_of(env_name, agent, policy_mapping_fn)
        if policy not in policies:
            # Helpers list their policies from the env they were given: another env or
            # env_config (more agents) needs the mapping rebuilt from that one.
            helper = {PolicyPerAgent: "independent", PolicyPerType: "by_type"}.get(
                type(policy_mapping_fn)
            )
            fix = (
                "build the mapping from the env and env_config it runs with, "
                f"{helper}('{env_name}', env_config)"
                if helper
                else "add it to `policies` or map the agent to one of them"
            )
            raise UsageError(
                f"agent '{agent}' of {env_name} maps to policy '{policy}', which is not among "
                f"the policies ({', '.join(sorted(policies))}); {fix}"
            )
        members.setdefault(policy, []).append(agent)
    for policy, sharing in members.items():
        _check_same_spaces(env_name, policy, sharing, agents)


def _checked(
    env_name: str,
    env_config: Mapping[str, Any] | None,
    policies: set[str],
    policy_mapping_fn: PolicyMappingFn,
    agents: Mapping[str, AgentSpaces] | None = None,
) -> MultiAgentSettings:
    agents = agents if agents is not None else agent_spaces(env_name, env_config)
    check_mapping(env_name, agents, policies, policy_mapping_fn)
    return MultiAgentSettings(policies=policies, policy_mapping_fn=policy_mapping_fn)


def _policy_of(env_name: str, agent: str, policy_mapping_fn: PolicyMappingFn) -> str:
    # RLlib calls the mapping with the agent's episode; give user functions a real one.
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

    try:
        return str(policy_mapping_fn(agent, MultiAgentEpisode()))
    except Exception as error:
        raise UsageError(
            f"agent '{agent}' of {env_name} has no policy (policy_mapping_fn raised "
            f"{type(error).__name__}: {error}); map every agent, e.g. with "
            f"rlsuite.multiagent.independent('{env_name}')"
        ) from None


def _check_same_spaces(
    env_name: str, policy: str, sharing: list[str], agents: Mapping[str, AgentSpaces]
) -> None:
    first = sharing[0]
    for other in sharing[1:]:
        for kind in AgentSpaces._fields:
            mine, theirs = getattr(agents[first], kind), getattr(agents[other], kind)
            if mine != theirs:
                raise UsageError(
                    f"agents '{first}' and '{other}' of {env_name} share policy '{policy}' but "
                    f"their {kind} spaces differ ({mine} vs {theirs}); give them separate "
                    f"policies, e.g. rlsuite.multiagent.by_type('{env_name}')"
                )
