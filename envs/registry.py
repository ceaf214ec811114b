"""Every env the suite trains on, by `family/name`.

Creators import their simulators lazily, so listing or validating names costs nothing
until an env is built. Each creator takes RLlib's `env_config`; the key
`max_episode_steps` works for every env (smoke runs use it to finish episodes early).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

from rlsuite.envs import outside

EnvCreator = Callable[[dict[str, Any]], gym.Env]
EnvFactory = Callable[[Mapping[str, Any] | None], gym.Env]

GYMNASIUM_IDS: dict[str, str] = {
    "classic/cartpole": "CartPole-v1",
    "classic/pendulum": "Pendulum-v1",
    "classic/acrobot": "Acrobot-v1",
    "classic/mountain_car": "MountainCar-v0",
    "classic/mountain_car_continuous": "MountainCarContinuous-v0",
    "mujoco/halfcheetah": "HalfCheetah-v5",
    "mujoco/hopper": "Hopper-v5",
    "mujoco/walker2d": "Walker2d-v5",
    "mujoco/ant": "Ant-v5",
    "mujoco/humanoid": "Humanoid-v5",
    "mujoco/swimmer": "Swimmer-v5",
    "mujoco/inverted_pendulum": "InvertedPendulum-v5",
}
ATARI_FAMILY = "atari/"

# Multi-agent envs: name -> PettingZoo module with a `parallel_env(**env_config)`, run
# through RLlib's ParallelPettingZooEnv by envs/multiagent.py. Adding one is a line here.
# No sisl/waterworld: PettingZoo 1.26 removed it, and 1.25's breaks on pymunk 7.
PETTINGZOO_MODULES: dict[str, str] = {
    "mpe/simple_spread": "mpe2.simple_spread_v3",
    "mpe/simple_tag": "mpe2.simple_tag_v3",
    "sisl/multiwalker": "pettingzoo.sisl.multiwalker_v9",
    "butterfly/pistonball": "pettingzoo.butterfly.pistonball_v6",
}
# Turn-based games: name -> PettingZoo module with an AEC `env(**env_config)`.
PETTINGZOO_TURN_BASED: dict[str, str] = {
    "classic/connect_four": "pettingzoo.classic.connect_four_v3",
    "classic/tictactoe": "pettingzoo.classic.tictactoe_v3",
}


class EnvConfigError(ValueError):
    """An env_config value a registry env does not take; the message names the fix."""


class UnknownEnvError(KeyError):
    """An env name that is not in the registry; the message suggests close names."""

    def __str__(self) -> str:
        return str(self.args[0])


def names() -> list[str]:
    """All registered names, Atari games included."""
    from rlsuite.envs.atari import game_ids

    return sorted(
        [
            *GYMNASIUM_IDS,
            *PETTINGZOO_MODULES,
            *PETTINGZOO_TURN_BASED,
            *(ATARI_FAMILY + game for game in game_ids()),
        ]
    )


def is_multi_agent(env: str | type, env_config: Mapping[str, Any] | None = None) -> bool:
    """Whether `env` is a multi-agent env (an RLlib MultiAgentEnv needing `.multi_agent()`).
    Registry names answer from the tables; other envs are built once to see."""
    if isinstance(env, str) and is_registered(env):
        return _in_tables(env)
    return _built_kind(env, env_config)[0]


def is_turn_based(env: str | type, env_config: Mapping[str, Any] | None = None) -> bool:
    """Whether `env` is a turn-based (AEC) game: one agent moves per step."""
    if isinstance(env, str) and is_registered(env):
        return env in PETTINGZOO_TURN_BASED
    return _built_kind(env, env_config)[1]


def creator(env: str | type) -> EnvFactory:
    """The creator of `env` as RLlib would build it: a name of this registry, a name
    registered with Tune's `register_env`, a Gymnasium id, or an env class. Raises
    UnknownEnvError with close names if `env` is none of these."""
    if isinstance(env, type):
        return outside.class_creator(env)
    if is_registered(env):
        return _registry_creator(env)
    factory = outside.tune_creator(env) or outside.gymnasium_creator(env)
    if factory is None:
        raise UnknownEnvError(_unknown_message(env))
    return factory


def display_name(env: str | type | None) -> str:
    """How messages name an env: its name, or an env class's qualified name."""
    return f"{env.__module__}.{env.__qualname__}" if isinstance(env, type) else str(env)


def takes_max_episode_steps(env: str | type | None) -> bool:
    """Whether `env_config["max_episode_steps"]` limits `env`'s episodes (`--smoke` sets
    it): true for registry names and Gymnasium ids (`gym.make` takes it), not for a
    user's creator or class, which may refuse unknown keys."""
    if not isinstance(env, str):
        return False
    return is_registered(env) or outside.gymnasium_creator(env) is not None


def is_registered(name: str) -> bool:
    """Whether `name` is one of this registry's `family/name` envs."""
    return _in_tables(name) or name in GYMNASIUM_IDS or _is_atari_name(name)


def _in_tables(name: str) -> bool:
    return name in PETTINGZOO_MODULES or name in PETTINGZOO_TURN_BASED


def _is_atari_name(env: str | type) -> bool:
    if not isinstance(env, str) or not env.startswith(ATARI_FAMILY):
        return False
    from rlsuite.envs.atari import game_ids

    return env.removeprefix(ATARI_FAMILY) in game_ids()


def _built_kind(env: str | type, env_config: Mapping[str, Any] | None) -> tuple[bool, bool]:
    """(multi-agent, turn-based) of an env from outside the registry, read off a built
    one: only the env knows (a `register_env` creator may return anything)."""
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    built = make(env, env_config)
    try:
        return isinstance(built, MultiAgentEnv), outside.is_turn_based(built)
    finally:
        built.close()


def _registry_creator(name: str) -> EnvFactory:
    if _in_tables(name):
        return _multi_agent_creator(name)
    base = _base_creator(name)

    def create(env_config: Mapping[str, Any] | None = None) -> gym.Env:
        config = dict(env_config or {})
        max_episode_steps = config.pop("max_episode_steps", None)
        num_envs = config.pop("num_envs", None)
        if num_envs is not None:  # RLlib's gym_env_vectorize_mode="vector_entry_point"
            return _vector_env(name, int(num_envs), config, max_episode_steps)  # type: ignore[return-value]
        env = base(config)
        if max_episode_steps is not None:
            env = gym.wrappers.TimeLimit(env, max_episode_steps=int(max_episode_steps))
        return env

    return create


def make(env: str | type, env_config: Mapping[str, Any] | None = None) -> Any:
    """The env as RLlib builds it (a gym.Env or an RLlib MultiAgentEnv)."""
    if (env_config or {}).get("render_mode") == "rgb_array":
        # Off-screen frames need no display. With SDL's default video driver, a pygame
        # env that rendered (sisl/multiwalker) makes a later `import triton` (torch's
        # compiler, which transformers imports) die with a segmentation fault; the
        # dummy driver draws the same frames.
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    return creator(env)(env_config)


def register(name: str) -> None:
    """Make a registry name usable as `config.environment(name)` in this Ray session;
    other names are RLlib's own to resolve (Tune's registered names, Gymnasium ids)."""
    from ray.tune.registry import register_env

    if is_registered(name):
        register_env(name, _registry_creator(name))


def batched_multi_agent(name: Any, num_envs: int, env_config: Mapping[str, Any]) -> Any:
    """`num_envs` copies of a multi-agent env stepped as one batch (an RLlib
    `VectorMultiAgentEnv`), or None where the env, or one of its options, has no batched
    version: RLlib's runner then steps PettingZoo envs one by one. Only MPE
    simple_spread has one (envs/spread_vector.py)."""
    if name != "mpe/simple_spread":
        return None
    from rlsuite.envs.spread_vector import make_spread_vector

    return make_spread_vector(num_envs, env_config, lambda: make(name, env_config))


def _multi_agent_creator(name: str) -> EnvFactory:
    def create(env_config: Mapping[str, Any] | None = None) -> gym.Env:
        # A MultiAgentEnv cannot take gym's TimeLimit: envs/multiagent.py handles
        # `max_episode_steps` (PettingZoo's `max_cycles`, or a move limit).
        from rlsuite.envs.multiagent import make_parallel, make_turn_based

        if name in PETTINGZOO_TURN_BASED:
            return make_turn_based(PETTINGZOO_TURN_BASED[name], env_config)
        return make_parallel(PETTINGZOO_MODULES[name], env_config)

    return create


def _vector_env(
    name: str, num_envs: int, config: dict[str, Any], max_episode_steps: int | None
) -> gym.vector.VectorEnv:
    """Atari games as one ale-py `AtariVectorEnv` (C++ threads); other envs side by side
    in Gymnasium's SyncVectorEnv, as RLlib's default "sync" mode would."""
    if name.startswith(ATARI_FAMILY):
        from rlsuite.envs.atari_vector import make_atari_vector

        return make_atari_vector(
            name.removeprefix(ATARI_FAMILY), num_envs, config, max_episode_steps
        )
    single = {**config, "max_episode_steps": max_episode_steps} if max_episode_steps else config
    return gym.vector.SyncVectorEnv([lambda: make(name, single) for _ in range(num_envs)])


def _base_creator(name: str) -> EnvCreator:
    if name in GYMNASIUM_IDS:
        env_id = GYMNASIUM_IDS[name]
        return lambda config: gym.make(env_id, **config)
    if name.startswith(ATARI_FAMILY):
        from rlsuite.envs.atari import game_ids, make_atari

        game = name.removeprefix(ATARI_FAMILY)
        if game in game_ids():
            return lambda config: make_atari(game, config)
    raise UnknownEnvError(_unknown_message(name))


def _unknown_message(name: str) -> str:
    known = [*names(), *outside.tune_names(), *outside.gymnasium_ids()]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else "use a registry name (`python -m rlsuite.envs`), a Gymnasium id, a name "
        "registered with ray.tune.registry.register_env, or an env class"
    )
    return f"unknown env '{name}': {hint}"
