"""When Tune writes its experiment state (what `--resume` restores from): after every
trial checkpoint, and otherwise on Tune's own adaptive period.

The state must name each trial's latest checkpoint as soon as it exists, so that a driver
killed by SIGKILL resumes within one checkpoint interval (tests/test_stop_signals.py). Tune
writes it on a period (TUNE_GLOBAL_CHECKPOINT_S, "auto": 10 s or more, at most 5% of the
time) and after every `num_to_keep` checkpoints of a trial. The suite used to set the period
to 0, a write after every event: each write re-copies the driver's whole staging directory,
the trials' growing result.json, progress.csv and TensorBoard files included, into the
storage path. On `maddpg_spread.py`'s 1.1 s iterations (two trials; 38 MB of result.json
each by 40 minutes in) that kept the driver at a third of a core and more, beside trials
that have one core between them, and readers saw the files truncated mid-copy. Here the period is Tune's
default and the count is one: Tune's own forced write (`_ExperimentCheckpointManager`'s
`sync_every_n_trial_checkpoints`, which Tune sets from `num_to_keep`) after each checkpoint.
"""

from __future__ import annotations

import os
from typing import Any

from ray.tune.execution import experiment_state

_PATCHED = "_rlsuite_sync_after_every_checkpoint"


def sync_after_every_trial_checkpoint() -> None:
    """Set Tune up as the module docstring says; idempotent. A user's own
    TUNE_GLOBAL_CHECKPOINT_S is kept."""
    # Forced writes come as often as checkpoints: Tune's warning about that is expected here.
    os.environ.setdefault("TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S", "0")
    manager = experiment_state._ExperimentCheckpointManager
    if getattr(manager.__init__, _PATCHED, False):
        return
    original = manager.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["sync_every_n_trial_checkpoints"] = 1
        original(self, *args, **kwargs)

    setattr(__init__, _PATCHED, True)
    manager.__init__ = __init__  # type: ignore[method-assign]
