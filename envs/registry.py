"""Every env the suite trains on, by `family/name`.

Creators import their simulators lazily, so listing or validating names costs nothing
until an env is built. Each creator takes RLlib's `env_config`; the key
`max_episode_steps` works for every env (smoke runs use it to finish episodes early).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

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
}


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


def is_multi_agent(name: str) -> bool:
    """Whether `name` is a multi-agent env (an RLlib MultiAgentEnv needing `.multi_agent()`)."""
    return name in PETTINGZOO_MODULES or is_turn_based(name)


def is_turn_based(name: str) -> bool:
    """Whether `name` is a turn-based (AEC) game: one agent moves per step."""
    return name in PETTINGZOO_TURN_BASED


def creator(name: str) -> EnvFactory:
    """The creator for `name`; raises UnknownEnvError with suggestions if there is none."""
    if is_multi_agent(name):
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


def make(name: str, env_config: Mapping[str, Any] | None = None) -> gym.Env:
    return creator(name)(env_config)


def register(name: str) -> None:
    """Make `name` usable as `config.environment(name)` in this Ray session."""
    from ray.tune.registry import register_env

    register_env(name, creator(name))


def _multi_agent_creator(name: str) -> EnvFactory:
    def create(env_config: Mapping[str, Any] | None = None) -> gym.Env:
        # A MultiAgentEnv cannot take gym's TimeLimit: envs/multiagent.py handles
        # `max_episode_steps` (PettingZoo's `max_cycles`, or a move limit).
        from rlsuite.envs.multiagent import make_parallel, make_turn_based

        if is_turn_based(name):
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
    close = difflib.get_close_matches(name, names(), n=3, cutoff=0.6)
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else "see `python -m rlsuite.envs` for the list"
    )
    return f"unknown env '{name}': {hint}"
