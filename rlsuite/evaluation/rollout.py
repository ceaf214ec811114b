"""Play episodes with a restored policy and summarise their returns and lengths."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from rlsuite.errors import EnvFailed, UsageError
from rlsuite.evaluation.acting import ConnectedPolicy, EnvStep, EpisodeResult
from rlsuite.evaluation.multiagent import MultiAgentEpisodeResult

FrameSink = Callable[[np.ndarray], None]

MAX_EPISODE_STEPS = 100_000
"""Steps after which an episode that has not ended is an error: an env without a time
limit (a class or a `register_env` creator, which gymnasium's registry does not wrap)
would play forever. Above every standard limit (Atari's 27,000 agent steps)."""


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
    policy: ConnectedPolicy,
    env: Any,
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
    policy: ConnectedPolicy, env: Any, explore: bool, seed: int, sink: FrameSink | None
) -> EpisodeResult:
    """One episode as RLlib's env runners play it: reset, then act and step until done."""
    episode = policy.new_episode(env, seed)
    try:
        observations, infos = env.reset(seed=seed)
    except Exception as error:
        raise EnvFailed(f"the env raised in reset(seed={seed})") from error
    policy.record_reset(episode, observations, infos)
    _render(env, sink)
    # A time limit of the env's own above the bound is the env's to enforce.
    limit = max(MAX_EPISODE_STEPS, getattr(getattr(env, "spec", None), "max_episode_steps", 0) or 0)
    for steps in range(limit + 1):
        if episode.is_done:
            break
        if steps == limit:
            raise UsageError(
                f"the episode seeded {seed} did not end in {limit:,} steps: the "
                "env has no time limit; wrap it in gymnasium.wrappers.TimeLimit (or register "
                "it with max_episode_steps)"
            )
        actions, actions_for_env, extra = policy.act(episode, explore)
        try:
            outcome = env.step(actions_for_env)
        except Exception as error:
            raise EnvFailed(f"the env raised in step() of the episode seeded {seed}") from error
        policy.record_step(episode, EnvStep(actions, extra, *outcome))
        _render(env, sink)
    return policy.result(episode)


def summarize(results: Sequence[EpisodeResult]) -> tuple[dict[str, Stats], Stats]:
    """Return statistics per policy and episode-length statistics."""
    return _per_id([r.returns for r in results]), Stats.of([r.length for r in results])


def summarize_agents(results: Sequence[MultiAgentEpisodeResult]) -> tuple[dict[str, Stats], Stats]:
    """Return statistics per agent and of the team return (every agent's rewards)."""
    return _per_id([r.agent_returns for r in results]), Stats.of([r.team_return for r in results])


def _per_id(returns: Sequence[dict[str, float]]) -> dict[str, Stats]:
    """Statistics per id over the episodes in which the id took part (a self-play
    snapshot plays only some games)."""
    ids = sorted({key for episode in returns for key in episode})
    return {key: Stats.of([r[key] for r in returns if key in r]) for key in ids}


def render_frame(env: gym.Env) -> np.ndarray:
    frame: Any = env.render()
    if not isinstance(frame, np.ndarray) or frame.ndim != 3:
        raise ValueError("the env does not render RGB frames")
    return frame


def _render(env: gym.Env, sink: FrameSink | None) -> None:
    if sink is not None:
        sink(render_frame(env))
