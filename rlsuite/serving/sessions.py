"""What a served policy keeps per session, and how many sessions a replica keeps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

MAX_SESSIONS = 10_000
KEEP_STEPS = 64  # of a session's episode: enough history for frame stacks and prev-actions
SESSION_BYTES = 1 << 30
"""Observations a replica keeps for its sessions at most: 10,000 sessions of Atari frames
(84x84x4 uint8, up to KEEPS_AT_MOST of them a session) would hold 54 GB."""
KEEPS_AT_MOST = 3 * KEEP_STEPS + 1
"""Observations in a session's episode at most: `ServedPolicy._remember` cuts it past
2 * KEEP_STEPS steps to a look-back of KEEP_STEPS, then it grows again."""


@dataclass
class Session:
    episode: Any
    actions: Any
    extra_model_outputs: Any


def session_limit(observation_space: gym.Space) -> int:
    """Sessions a replica keeps: MAX_SESSIONS, or fewer where their episodes' observations
    would pass SESSION_BYTES."""
    per_session = observation_bytes(observation_space) * KEEPS_AT_MOST
    return max(1, min(MAX_SESSIONS, SESSION_BYTES // max(1, per_session)))


def observation_bytes(space: gym.Space) -> int:
    """Bytes of one observation of `space` (of all agents, for a multi-agent dict)."""
    if isinstance(space, gym.spaces.Dict):
        return sum(observation_bytes(s) for s in space.spaces.values())
    if isinstance(space, gym.spaces.Tuple):
        return sum(observation_bytes(s) for s in space.spaces)
    return int(np.prod(space.shape or (1,))) * np.dtype(space.dtype or np.int64).itemsize
