"""PettingZoo envs as RLlib `MultiAgentEnv`s, through RLlib's own wrappers.

Parallel envs (every agent acts each step) go through `ParallelPettingZooEnv`, turn-based
(AEC) games such as connect four through `PettingZooEnv`, which returns only the
observation of the agent to move (with PettingZoo's `action_mask` in it).

RLlib's wrappers do the API translation; this module adds only what they lack:
- `max_episode_steps` becomes PettingZoo's `max_cycles` (one parallel step is one cycle),
  so episodes end with PettingZoo's own flags (a truncation, except that multiwalker
  reports its time limit as a termination); turn-based games have no `max_cycles`, so
  `MoveLimit` truncates them after that many moves;
- pixel observations (H x W x 3 uint8, e.g. pistonball's 457x120 RGB per piston) become
  84x84x1 grey float32 in [0, 1] like the Atari envs, so RLlib's default CNN fits them
  (SuperSuit would do this, but it is one more dependency for two cv2 calls);
- agent ids keep PettingZoo's order (RLlib's wrapper lists them from a set, whose order
  changes between processes);
- turn-based games' observations are `{"observations": board, "action_mask": mask}` in
  float32: the keys RLlib's ActionMaskingRLModule reads (PettingZoo says `observation`)
  and a dtype torch layers take (PettingZoo's are int8);
- `render()` works: RLlib's wrappers pass a render mode that PettingZoo's `render()`
  does not take;
- PettingZoo's AEC-to-parallel conversion asks the game for an observation in `last()`
  and throws it away, once per agent and step; `SkipDiscardedObservations` stops that,
  which halves the cost of pixel observations (pistonball's are 20 crops per step).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
from pettingzoo.utils.conversions import aec_to_parallel_wrapper
from pettingzoo.utils.env import ParallelEnv
from pettingzoo.utils.wrappers import (
    AssertOutOfBoundsWrapper,
    BaseParallelWrapper,
    BaseWrapper,
    OrderEnforcingWrapper,
)
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv
from ray.rllib.utils.typing import MultiAgentDict

PIXEL_SIZE = 84
# PettingZoo's renderers import pygame, which otherwise greets on stdout in every process.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


def make_parallel(module: str, env_config: Mapping[str, Any] | None = None) -> MultiAgentEnv:
    """`module.parallel_env(**env_config)` wrapped for RLlib; `max_episode_steps` sets `max_cycles`."""
    kwargs = dict(env_config or {})
    max_episode_steps = kwargs.pop("max_episode_steps", None)
    if max_episode_steps is not None:
        kwargs["max_cycles"] = int(max_episode_steps)
    env: ParallelEnv = importlib.import_module(module).parallel_env(**kwargs)
    if isinstance(env, aec_to_parallel_wrapper):
        env.aec_env = SkipDiscardedObservations(without_checks(env.aec_env))
    if has_pixel_observations(env):
        env = GreyResize(env, PIXEL_SIZE)
    wrapped = ParallelEnvForRLlib(env)
    wrapped.possible_agents = list(env.possible_agents)
    wrapped.agents = list(env.possible_agents)
    return wrapped


def make_turn_based(module: str, env_config: Mapping[str, Any] | None = None) -> MultiAgentEnv:
    """`module.env(**env_config)` (PettingZoo's AEC API) wrapped for RLlib; one agent moves per step."""
    kwargs = dict(env_config or {})
    max_episode_steps = kwargs.pop("max_episode_steps", None)
    game = importlib.import_module(module).env(**kwargs)
    wrapped = TurnBasedEnvForRLlib(game)
    if max_episode_steps is None:
        return wrapped
    return MoveLimit(wrapped, int(max_episode_steps))


class ParallelEnvForRLlib(ParallelPettingZooEnv):
    """RLlib's wrapper of a PettingZoo parallel env, with a working `render()`."""

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        self.render_mode = env.render_mode
        self.metadata = dict(env.metadata)  # render_fps for videos

    def render(self) -> Any:
        return self.par_env.render()


class TurnBasedEnvForRLlib(PettingZooEnv):
    """RLlib's wrapper of a PettingZoo AEC game: only the agent to move observes, with its
    action mask under the keys RLlib's ActionMaskingRLModule reads."""

    def __init__(self, game: Any) -> None:
        super().__init__(game)
        self.possible_agents = list(game.possible_agents)
        self.agents = list(game.possible_agents)
        spaces = {str(a): masked_space(game.observation_space(a)) for a in game.possible_agents}
        self.observation_spaces = dict(spaces.items())
        self.observation_space = gym.spaces.Dict(spaces)
        self.render_mode = game.render_mode
        self.metadata = dict(game.metadata)  # render_fps for videos

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        observations, infos = super().reset(seed=seed, options=options)
        return _masked(observations), infos

    def step(self, action: MultiAgentDict) -> Any:
        observations, *rest = super().step(action)
        return (_masked(observations), *rest)

    def render(self) -> Any:
        return self.env.render()


def masked_space(space: gym.Space) -> gym.Space:
    """PettingZoo's `{"observation", "action_mask"}` space as RLlib's masking module reads it."""
    if not isinstance(space, gym.spaces.Dict) or "action_mask" not in space.spaces:
        return space
    board, mask = space["observation"], space["action_mask"]
    assert isinstance(board, gym.spaces.Box) and isinstance(mask, gym.spaces.Box)
    return gym.spaces.Dict(
        {
            "observations": gym.spaces.Box(
                board.low.astype(np.float32), board.high.astype(np.float32), dtype=np.float32
            ),
            "action_mask": gym.spaces.Box(0.0, 1.0, mask.shape, np.float32),
        }
    )


def _masked(observations: MultiAgentDict) -> MultiAgentDict:
    return {
        agent: {
            "observations": np.asarray(obs["observation"], np.float32),
            "action_mask": np.asarray(obs["action_mask"], np.float32),
        }
        if isinstance(obs, dict) and "action_mask" in obs
        else obs
        for agent, obs in observations.items()
    }


def without_checks(env: Any) -> Any:
    """`env` without PettingZoo's OrderEnforcing and AssertOutOfBounds wrappers when those
    are all that wraps it. In a parallel env they only re-check what the parallel wrapper
    and RLlib guarantee (reset before step, actions from the action space), and every
    attribute the parallel wrapper reads per agent per step passed through both:
    `BaseWrapper.__getattr__` was 10% of MPE simple_spread's sampling time."""
    inner = env
    while isinstance(inner, OrderEnforcingWrapper | AssertOutOfBoundsWrapper):
        inner = inner.env
    return env if isinstance(inner, BaseWrapper) else inner


class SkipDiscardedObservations(BaseWrapper):
    """PettingZoo's aec_to_parallel_wrapper calls `last()` before every agent's action and
    drops the observation; computing it is most of a pixel env's step."""

    def last(self, observe: bool = True) -> tuple[Any, ...]:
        return self.env.last(observe=False)


class MoveLimit(MultiAgentEnv):
    """Truncates a turn-based game after `max_moves` moves (all agents' together)."""

    def __init__(self, env: MultiAgentEnv, max_moves: int) -> None:
        super().__init__()
        self.env = env
        self.max_moves = max_moves
        self.moves = 0
        self.possible_agents = env.possible_agents
        self.agents = env.agents
        self.observation_spaces = env.observation_spaces
        self.action_spaces = env.action_spaces
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.render_mode = getattr(env, "render_mode", None)
        self.metadata = getattr(env, "metadata", {})

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        self.moves = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action_dict: MultiAgentDict) -> Any:
        observations, rewards, terminateds, truncateds, infos = self.env.step(action_dict)
        self.moves += 1
        if self.moves >= self.max_moves and not terminateds["__all__"]:
            truncateds = {**dict.fromkeys(observations, True), "__all__": True}
        return observations, rewards, terminateds, truncateds, infos

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def has_pixel_observations(env: ParallelEnv) -> bool:
    space = env.observation_space(env.possible_agents[0])
    return (
        isinstance(space, gym.spaces.Box)
        and len(space.shape) == 3
        and space.shape[-1] == 3
        and space.dtype == np.uint8
    )


class GreyResize(BaseParallelWrapper):
    """RGB frames to `size` x `size` x 1 grey frames, float32 in [0, 1]."""

    def __init__(self, env: ParallelEnv, size: int) -> None:
        super().__init__(env)
        self.size = size
        self._space = gym.spaces.Box(0.0, 1.0, (size, size, 1), np.float32)

    def observation_space(self, agent: str) -> gym.spaces.Box:
        return self._space

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._convert(observations), infos

    def step(self, actions: dict[str, Any]) -> tuple[Any, ...]:
        observations, *rest = self.env.step(actions)
        return (self._convert(observations), *rest)

    def _convert(self, observations: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {agent: self._frame(obs) for agent, obs in observations.items()}

    def _frame(self, rgb: np.ndarray) -> np.ndarray:
        grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        # INTER_AREA averages the pixels it drops: thin pistons and the ball stay visible.
        small = cv2.resize(grey, (self.size, self.size), interpolation=cv2.INTER_AREA)
        return (small[..., None] / 255.0).astype(np.float32)
