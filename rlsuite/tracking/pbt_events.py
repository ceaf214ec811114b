"""Tune PBT's perturbations by the trial they changed, for the trackers.

Tune's PBT appends each exploit to `pbt_global.txt` in the experiment folder (parsed by
`rlsuite.launcher.live.PbtLog`, as the live view reads it) while it processes a result,
before the callbacks see that result. A tracker takes a trial's exploits with the trial's
own results, so they land in its MLflow or W&B run at the iteration they followed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ray.tune.experiment import Trial

from rlsuite.launcher.live import PBT_LOG, Exploit, PbtLog

# Tune's PBT tags a perturbed trial `<its first tag>@perturbed[<new values>]` and logs the
# tag the trial had before the exploit; the first tag names the trial for good.
_PERTURBED = "@perturbed["


class PbtEvents:
    def __init__(self) -> None:
        self._log: PbtLog | None = None
        self._pending: dict[str, list[Exploit]] = {}
        self._trial_ids: dict[str, str] = {}

    def take(self, trial: Trial) -> list[Exploit]:
        """The exploits of `trial` logged since the last call for it (none outside PBT)."""
        self._trial_ids[_first_tag(trial.experiment_tag)] = trial.trial_id
        if self._log is None:
            self._log = PbtLog(Path(trial.local_experiment_path) / PBT_LOG)
        for exploit in self._log.read():
            self._pending.setdefault(_first_tag(exploit.trial_tag), []).append(exploit)
        return self._pending.pop(_first_tag(trial.experiment_tag), [])

    def record(self, exploit: Exploit, iteration: int) -> dict[str, Any]:
        """One exploit as plain values: the trial's iteration when it was taken (PBT
        exploits while it processes a result, so: after that iteration), whose checkpoint
        it copied and from which iteration, the config values explore set, and the
        exploited trial's values they replaced."""
        source = _first_tag(exploit.source_tag)
        return {
            "iteration": iteration,
            "exploited_trial": self._trial_ids.get(source, exploit.source_tag),
            "exploited_iteration": exploit.source_iteration,
            "new_values": {key: after for key, (_, after) in exploit.changes.items()},
            "exploited_values": {key: before for key, (before, _) in exploit.changes.items()},
        }


def numeric_values(record: dict[str, Any]) -> dict[str, float]:
    """The new values of an exploit record that are numbers, keyed `pbt/<config key>`."""
    return {
        f"pbt/{key}": float(value)
        for key, value in record["new_values"].items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


def _first_tag(tag: str) -> str:
    return tag.split(_PERTURBED)[0]
