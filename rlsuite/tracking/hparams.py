"""TensorBoard's HParams dashboard: each trial's searched values and final metrics in one
table, so a sweep's trials compare side by side.

Tune's `TBXLoggerCallback` already writes the hparams plugin data when a trial ends, but
with the values its search drew first (a PBT trial's perturbed values are missing) and
with every scalar of the last result as a metric (hundreds of columns for RLlib). This
subclass, which replaces Tune's default one, writes the trial's current values of every
searched and perturbed key, and the suite's named metrics.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ray.tune.experiment import Trial
from ray.tune.logger import TBXLoggerCallback
from tensorboardX.summary import hparams

from rlsuite.launcher.progress import flat_result

TAG_PREFIX = "ray/tune/"  # where Tune's TensorBoard logger puts every result key
HPARAM_TYPES = (str, bool, int, float)


class HParamsLogger(TBXLoggerCallback):
    def __init__(self, searched: Iterable[str], names: frozenset[str]):
        super().__init__()
        self._searched = tuple(searched)
        self._names = names

    def _try_log_hparams(self, trial: Trial, result: dict) -> None:
        """Called by Tune's `log_trial_end` with the last result's scalars when the trial
        has searched values."""
        config = flat_result(dict(trial.config))
        drawn = flat_result(dict(trial.evaluated_params))
        values = {
            key: _hparam(config.get(key, drawn.get(key)))
            for key in (*drawn, *self._searched)
            if key in config or key in drawn
        }
        final = {
            key: value
            for key, value in result.items()
            if key.removeprefix(TAG_PREFIX) in self._names
        }
        writer = self._trial_writer[trial].file_writer
        for summary in hparams(hparam_dict=values, metric_dict=final):
            writer.add_summary(summary)


def _hparam(value: Any) -> str | bool | int | float:
    return value if isinstance(value, HPARAM_TYPES) else str(value)
