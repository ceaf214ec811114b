"""Env registry: every env by `family/name`, wrappers, and the suite's own envs."""

from rlsuite.envs.registry import (
    UnknownEnvError,
    creator,
    is_multi_agent,
    is_turn_based,
    make,
    names,
    register,
)

__all__ = [
    "UnknownEnvError",
    "creator",
    "is_multi_agent",
    "is_turn_based",
    "make",
    "names",
    "register",
]
