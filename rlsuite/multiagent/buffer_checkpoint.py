"""RLlib's `store_buffer_in_checkpoints=True` (DQN's and SAC's own flag, off by default)
for the suite's replay from arrays: each checkpoint keeps the buffer's rows and its
sampler's state (in `algorithm_state.pkl`, the Algorithm's base state), so `--resume` and
PBT's exploit carry on from the buffer the run had.

RLlib 2.60's new stack ignores the flag for its own buffers (a resumed run refills an
empty one), so the config refuses it where RLlib's buffers replay rather than let it do
nothing. A full buffer is large: simple_spread's transitions take 525 bytes each, so
`maddpg_spread.py`'s 1M rows are about 0.5 GB a checkpoint.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

BUFFER_STATE = "local_replay_buffer"  # the key RLlib's old stack stored its buffer under
NO_STORED_BUFFER = (
    "store_buffer_in_checkpoints keeps the suite's replay from arrays only (RLlib 2.60's "
    "new stack checkpoints none of its own buffers): drop it, or let transition_replay apply"
)


class BufferCheckpointMixin:
    """The Algorithm's Checkpointable state plus its `TransitionReplayBuffer`, as a
    component named `local_replay_buffer` (so `components=`/`not_components=` pick it in or
    out like RLlib's own), where the config's `store_buffer_in_checkpoints` asks."""

    _buffer_in_checkpoint: bool | None = None

    def get_state(
        self, components: Any = None, *, not_components: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        algo: Any = self
        state: dict[str, Any] = super().get_state(  # type: ignore[misc]
            components, not_components=not_components, **kwargs
        )
        buffer = algo.local_replay_buffer
        if (
            algo.config.store_buffer_in_checkpoints
            and buffer is not None
            and algo._check_component(BUFFER_STATE, components, not_components)
        ):
            state[BUFFER_STATE] = buffer.get_state()
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)  # type: ignore[misc]
        algo: Any = self
        stored = state.get(BUFFER_STATE)
        self._buffer_in_checkpoint = stored is not None
        if stored is None:
            return
        if algo.config.store_buffer_in_checkpoints:
            algo.local_replay_buffer.set_state(stored)
        else:
            _warn("a", False)

    def restore_from_path(self, path: Any, *args: Any, **kwargs: Any) -> None:
        # Whether a buffer was due is known here only: set_state also takes partial states
        # (weights from another algorithm), which rightly hold none. `component` stays in
        # kwargs as given: Algorithm.restore_from_path reads it from there.
        self._buffer_in_checkpoint = None
        super().restore_from_path(path, *args, **kwargs)  # type: ignore[misc]
        algo: Any = self
        whole = kwargs.get("component") is None
        if whole and algo.config.store_buffer_in_checkpoints and not self._buffer_in_checkpoint:
            _warn("no", True)


def _warn(holds: str, wanted: bool) -> None:
    # RLlib's old stack warned in the same two cases (Algorithm.__setstate__).
    logger.warning(
        "the checkpoint holds %s replay buffer, and store_buffer_in_checkpoints is %s: "
        "the buffer starts empty",
        holds,
        wanted,
    )
