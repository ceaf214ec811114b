"""Checks of a multi-agent config that must pass before Ray starts (UsageError if not)."""

from __future__ import annotations

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

import envs
from rlsuite.errors import UsageError
from rlsuite.multiagent.policies import agent_spaces, check_mapping


def check_multi_agent(config: AlgorithmConfig) -> None:
    """A multi-agent env gets policies for every agent, spaces matching within each policy;
    a single-agent env gets no multi-agent policies. Call after `validate.check_env`."""
    env = config.env
    if not isinstance(env, str):
        return  # an env class or a name registered elsewhere: RLlib checks it
    if not envs.is_multi_agent(env):
        if config.is_multi_agent:
            raise UsageError(
                f"{env} is a single-agent env but the config sets multi-agent policies "
                f"({', '.join(sorted(config.policies))}); remove .multi_agent(...)"
            )
        return
    if not config.is_multi_agent:
        raise UsageError(
            f"{env} is a multi-agent env but the config has no policy mapping; add "
            f".multi_agent(**rlsuite.multiagent.shared('{env}')) (or independent, by_type)"
        )
    agents = agent_spaces(env, config.env_config)
    check_mapping(env, agents, set(config.policies), config.policy_mapping_fn)
