"""`--seed` reaches RLlib's replay buffers.

RLlib 2.60 seeds its env runners and learners from `config.seed` but builds every
`EpisodeReplayBuffer` with `np.random.default_rng(seed=None)`
(episode_replay_buffer.py:173), so two off-policy runs with one seed sample different
batches. The workload appends `seed_replay_buffer` to the config's `on_algorithm_init`
callbacks (a callback rather than an Algorithm subclass: checkpoints restore by the
algorithm's own class).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.utils import force_list


def seed_replay_buffer(algorithm: Any, **_: Any) -> None:
    """Reseed the algorithm's replay buffer from its config's seed, if both exist."""
    buffer = getattr(algorithm, "local_replay_buffer", None)
    seed = algorithm.config.seed
    if seed is not None and buffer is not None and hasattr(buffer, "rng"):
        buffer.rng = np.random.default_rng(seed)


def with_seeded_replay(config: AlgorithmConfig) -> AlgorithmConfig:
    """`config` with `seed_replay_buffer` after the user's own `on_algorithm_init`."""
    own = [c for c in force_list(config.callbacks_on_algorithm_init) if c is not seed_replay_buffer]
    config.callbacks(on_algorithm_init=[*own, seed_replay_buffer])
    return config
