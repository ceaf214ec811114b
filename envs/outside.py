"""Envs the suite did not register: what RLlib itself accepts as `config.environment(env=...)`.

RLlib takes a name registered with `ray.tune.registry.register_env` (looked up first), a
Gymnasium id (made with `gym.make(id, **env_config)`), or an env class (built as
`cls(env_context)`). The suite's checks build the env the same way before Ray starts, so
that a user's RLlib script moves into an experiment file unchanged; RLlib's own env
runners then build it as they always do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

EnvFactory = Callable[[Mapping[str, Any] | None], Any]
ALE_NAMESPACE = "ALE/"


def tune_names() -> list[str]:
    """Names registered with `register_env` in this process (the experiment file's)."""
    from ray.tune.registry import ENV_CREATOR, _global_registry

    # Tune's registry offers no listing; before ray.init it keeps registrations in
    # `_to_flush`, after it in Ray's KV store (where `contains` looks).
    pending = getattr(_global_registry, "_to_flush", {})
    return sorted(key for category, key in pending if category == ENV_CREATOR)


def tune_creator(name: str) -> EnvFactory | None:
    """The creator `register_env(name, ...)` stored, called as RLlib calls it."""
    from ray.tune.registry import ENV_CREATOR, _global_registry

    if not _global_registry.contains(ENV_CREATOR, name):
        return None
    create = _global_registry.get(ENV_CREATOR, name)
    return lambda env_config: create(_context(env_config))


def gymnasium_ids() -> list[str]:
    _register_ale()
    return sorted(gym.registry)


def gymnasium_creator(env_id: str) -> EnvFactory | None:
    """`gym.make(env_id, **env_config)`, as RLlib makes a Gymnasium id."""
    if env_id.startswith(ALE_NAMESPACE):
        _register_ale()
    if env_id not in gym.registry:
        return None
    return lambda env_config: gym.make(env_id, **dict(env_config or {}))


def class_creator(env_class: type) -> EnvFactory:
    """`env_class(env_context)`, as RLlib builds an env class."""
    return lambda env_config: env_class(_context(env_config))


def is_turn_based(env: Any) -> bool:
    """RLlib's wrapper of a PettingZoo AEC game: one agent acts per step."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return isinstance(getattr(env, "unwrapped", env), PettingZooEnv) or isinstance(
        env, PettingZooEnv
    )


def _context(env_config: Mapping[str, Any] | None) -> Any:
    from ray.rllib.env.env_context import EnvContext

    return EnvContext(dict(env_config or {}), worker_index=0, num_workers=0)


def _register_ale() -> None:
    # RLlib's env creator imports ale_py for "ALE/" ids the same way (its ROMs ship in it).
    import ale_py

    gym.register_envs(ale_py)
