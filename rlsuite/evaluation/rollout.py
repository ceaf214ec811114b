"""Play episodes with a restored policy and summarise their returns and lengths."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from rlsuite.evaluation.policy import SingleAgentPolicy

FrameSink = Callable[[np.ndarray], None]


@dataclass(frozen=True)
class EpisodeResult:
    """One episode: its return per policy (module id) and its length in env steps."""

    returns: dict[str, float]
    length: int


@dataclass(frozen=True)
class Stats:
    mean: float
    std: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        array = np.asarray(values, dtype=float)
        return cls(float(array.mean()), float(array.std()), float(array.min()), float(array.max()))


def play(
    policy: SingleAgentPolicy,
    env: gym.Env,
    episodes: int,
    explore: bool,
    seed: int,
    frame_sink: Callable[[int], FrameSink | None] = lambda index: None,
) -> list[EpisodeResult]:
    """`episodes` episodes; episode i resets with seed `seed + i`, so runs are repeatable.

    `frame_sink(i)` returns where episode i's rendered frames go (None: not rendered).
    """
    torch.manual_seed(seed)  # exploration samples from the action distribution with torch
    env.action_space.seed(seed)
    return [play_episode(policy, env, explore, seed + i, frame_sink(i)) for i in range(episodes)]


def play_episode(
    policy: SingleAgentPolicy, env: gym.Env, explore: bool, seed: int, sink: FrameSink | None
) -> EpisodeResult:
    episode = policy.new_episode(env)
    observation, info = env.reset(seed=seed)
    episode.add_env_reset(observation=observation, infos=info)
    _render(env, sink)
    total = 0.0
    while not episode.is_done:
        action, action_for_env, extra = policy.act(episode, explore)
        observation, reward, terminated, truncated, info = env.step(action_for_env)
        episode.add_env_step(
            observation=observation,
            action=action,
            reward=reward,
            infos=info,
            terminated=terminated,
            truncated=truncated,
            extra_model_outputs=extra,
        )
        total += float(reward)
        _render(env, sink)
    return EpisodeResult(returns={pid: total for pid in policy.policy_ids}, length=len(episode))


def summarize(results: Sequence[EpisodeResult]) -> tuple[dict[str, Stats], Stats]:
    """Return statistics per policy and episode-length statistics."""
    policy_ids = sorted({pid for result in results for pid in result.returns})
    returns = {
        pid: Stats.of([r.returns[pid] for r in results if pid in r.returns]) for pid in policy_ids
    }
    return returns, Stats.of([r.length for r in results])


def render_frame(env: gym.Env) -> np.ndarray:
    frame: Any = env.render()
    if not isinstance(frame, np.ndarray) or frame.ndim != 3:
        raise ValueError("the env does not render RGB frames")
    return frame


def _render(env: gym.Env, sink: FrameSink | None) -> None:
    if sink is not None:
        sink(render_frame(env))
