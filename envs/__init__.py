"""Env registry: every env by `family/name`, wrappers, and the suite's own envs."""

from rlsuite.envs.registry import (
    EnvConfigError,
    UnknownEnvError,
    batched_multi_agent,
    creator,
    display_name,
    is_multi_agent,
    is_registered,
    is_turn_based,
    make,
    names,
    register,
    takes_max_episode_steps,
)

__all__ = [
    "EnvConfigError",
    "UnknownEnvError",
    "batched_multi_agent",
    "creator",
    "display_name",
    "is_multi_agent",
    "is_registered",
    "is_turn_based",
    "make",
    "names",
    "register",
    "takes_max_episode_steps",
]
