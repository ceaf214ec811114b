"""`--wandb PROJECT`: one W&B run per trial, through Tune's `WandbLoggerCallback`.

Runs are grouped by the run's name and carry the trial's config (updated as PBT changes
it) and the suite's named metrics per iteration, instead of every result key. Each PBT
exploit adds `pbt/<key>` values at the trial's next iteration and a record to the run's
config under `pbt_exploits`. Tune logs from one Ray actor per trial (`num_cpus=0`); with
`WANDB_MODE=offline` each run is written to `STORAGE_PATH/NAME/wandb/offline-run-*-TRIAL_ID`
(under `WANDB_DIR` when that is set), with no network. Not in the trial's own folder: Tune
copies that to the storage path before W&B finishes writing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ray.air.integrations.wandb import WandbLoggerCallback, _WandbLoggingActor
from ray.tune.experiment import Trial

from rlsuite import metrics
from rlsuite.tracking.pbt_events import PbtEvents, numeric_values
from rlsuite.tracking.selection import tracked_metrics

EXPLOITS_KEY = "pbt_exploits"


class _WrittenOutLoggingActor(_WandbLoggingActor):
    """Tune's W&B logging actor, which waits until W&B's service has written the run out
    before `run` returns. Tune kills the actor once `run` returns (`ray.kill`: no atexit
    hook, where W&B would tear its service down), and `wandb.finish()` can return before
    wandb-core has closed the run's transaction log: seen in CI, an offline run's `.wandb`
    file cut after its first 32 KiB block, its history records lost. `wandb.teardown()` is
    W&B's documented call for this ("invoked automatically in an atexit hook, but this is
    not reliable in certain setups")."""

    def run(self) -> None:
        super().run()
        self._wandb.teardown()


class WandbTracking(WandbLoggerCallback):
    _logger_actor_cls = _WrittenOutLoggingActor

    def __init__(
        self,
        project: str,
        group: str,
        names: frozenset[str],
        tags: dict[str, str],
        directory: Path,
    ):
        where: dict[str, Any] = {} if os.environ.get("WANDB_DIR") else {"dir": str(directory)}
        super().__init__(project=project, group=group, notes=_notes(tags), **where)
        self._names = names
        self._pbt = PbtEvents()
        self._exploits: dict[str, list[dict[str, Any]]] = {}

    def log_trial_result(self, iteration: int, trial: Trial, result: dict) -> None:
        step = int(result.get(metrics.TRAINING_ITERATION, iteration))
        kept: dict[str, Any] = {
            **tracked_metrics(result, self._names),
            metrics.TRAINING_ITERATION: step,  # W&B's step
        }
        exploits = self._exploits.setdefault(trial.trial_id, [])
        for exploit in self._pbt.take(trial):
            record = self._pbt.record(exploit, step)
            exploits.append(record)
            kept.update(numeric_values(record))
        config = dict(result.get("config") or trial.config)
        if exploits:
            config[EXPLOITS_KEY] = list(exploits)
        super().log_trial_result(iteration, trial, {**kept, "config": config})


def _notes(tags: dict[str, str]) -> str | None:
    """W&B's run notes: the experiment file and the git commit."""
    return ", ".join(f"{key} {value}" for key, value in tags.items()) or None
