"""The array-backed replay of `transitions.py`: one-step transitions (o, a, r, o',
terminated, truncated) as rows of preallocated numpy arrays, sampled uniformly with a
fancy index per column (why: that module's docstring)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np
import tree
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

WEIGHTS = "weights"  # importance weights, all 1: the column prioritized replay would set


class TransitionReplayBuffer:
    """FIFO ring of one-step transitions; uniform sampling with replacement, as RLlib's
    `EpisodeReplayBuffer` samples timesteps."""

    def __init__(self, capacity: int, seed: int | None = None) -> None:
        self.capacity = int(capacity)
        self.rng = np.random.default_rng(seed)
        self._columns: dict[str, list[np.ndarray]] | None = None
        self._structure: Any = None  # the observation's nesting (JointEnv's is a dict)
        self._next = 0
        self.added = 0

    def __len__(self) -> int:
        return min(self.added, self.capacity)

    def add(self, episodes: Iterable[SingleAgentEpisode]) -> None:
        for episode in episodes:
            if len(episode):
                columns, structure = _transitions(episode)
                self._structure = structure
                self._add_rows(columns)

    def sample(self, batch_size: int) -> dict[str, Any]:
        """`batch_size` transitions drawn uniformly (with replacement), as columns."""
        assert self._columns is not None and len(self), "sample() before any add()"
        rows = self.rng.integers(len(self), size=batch_size)
        picked = {name: [array[rows] for array in arrays] for name, arrays in self._columns.items()}
        batch = {name: arrays[0] for name, arrays in picked.items() if name not in _NESTED}
        for name in _NESTED:
            batch[name] = tree.unflatten_as(self._structure, picked[name])
        batch[WEIGHTS] = np.ones(batch_size, np.float32)
        return batch

    def get_state(self) -> dict[str, Any]:
        """The stored rows as they lie in the ring, where the next row goes, and the
        sampler's state (RLlib's Checkpointable API; see buffer_checkpoint.py). The RNG
        state is a JSON string: PCG64's 128-bit integers do not fit msgpack checkpoints."""
        columns = self._columns or {}
        return {
            "columns": {name: [a[: len(self)] for a in arrays] for name, arrays in columns.items()},
            "next": self._next,
            "structure": self._structure,
            "added": self.added,
            "rng": json.dumps(self.rng.bit_generator.state),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Into a buffer of the same capacity the ring comes back as it was, so the same
        sampler draws the same rows; into another capacity the rows go in oldest first,
        the oldest dropped where they do not fit, as `add` would."""
        self._columns, self._next = None, 0
        self._structure = state["structure"]
        columns, rows = state["columns"], len(state["columns"].get(Columns.ACTIONS, [[]])[0])
        if rows == self.capacity:  # a full ring of this size: keep its layout
            self._add_rows(columns)
            self._next = state["next"] % self.capacity
        elif rows:
            oldest_first = (state["next"] + np.arange(rows)) % rows
            self._add_rows(
                {name: [a[oldest_first] for a in arrays] for name, arrays in columns.items()}
            )
        self.added = state["added"]
        self.rng.bit_generator.state = json.loads(state["rng"])

    def _add_rows(self, columns: dict[str, list[np.ndarray]]) -> None:
        if self._columns is None:
            self._columns = {
                name: [np.empty((self.capacity, *a.shape[1:]), a.dtype) for a in arrays]
                for name, arrays in columns.items()
            }
        count = len(columns[Columns.ACTIONS][0])
        for start in range(0, count, self.capacity):  # a chunk longer than the buffer wraps
            stop = min(start + self.capacity, count)
            slots = (self._next + np.arange(stop - start)) % self.capacity
            for name, arrays in columns.items():
                for stored, new in zip(self._columns[name], arrays, strict=True):
                    stored[slots] = new[start:stop]
            self._next = int((slots[-1] + 1) % self.capacity)
        self.added += count


_NESTED = (Columns.OBS, Columns.NEXT_OBS)


def _transitions(episode: SingleAgentEpisode) -> tuple[dict[str, list[np.ndarray]], Any]:
    """An episode chunk's T steps as flat columns (nested observations flattened), and
    the observations' nesting."""
    observations = _stacked(episode.get_observations())  # T + 1 of them
    steps = len(episode)
    terminated = np.zeros(steps, bool)
    truncated = np.zeros(steps, bool)
    terminated[-1], truncated[-1] = episode.is_terminated, episode.is_truncated
    flat = tree.flatten(observations)
    columns = {
        Columns.OBS: [leaf[:-1] for leaf in flat],
        Columns.NEXT_OBS: [leaf[1:] for leaf in flat],
        Columns.ACTIONS: [np.asarray(episode.get_actions())],
        Columns.REWARDS: [np.asarray(episode.get_rewards(), np.float32)],
        Columns.TERMINATEDS: [terminated],
        Columns.TRUNCATEDS: [truncated],
    }
    return columns, tree.map_structure(lambda _: None, observations)


def _stacked(observations: Any) -> Any:
    """Observations as arrays with a leading time axis (a list of them stacked)."""
    if isinstance(observations, list):
        return tree.map_structure(lambda *leaves: np.stack(leaves), *observations)
    return observations
