"""What a run leaves after its trials: a line per trial (its status, last and best return,
env steps, wall time, checkpoint) and summary.json."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ray.tune import Result, ResultGrid
from ray.tune.experiment import Trial

from rlsuite import metrics
from rlsuite.launcher.failures import explain
from rlsuite.launcher.progress import console_result, count_text, finite, label, number_text

if TYPE_CHECKING:
    import pandas as pd


AFTER_RUN_LOOKUP_S = 30.0
"""The most the summary waits for a dead env runner's log: Tune's loop is over, and on a
busy machine the log reaches Ray's log service late (the retries before this limit waited
up to 36 s; the line in the loop waits less, and none is looked up after a SIGTERM)."""


@dataclass(frozen=True)
class TrialSummary:
    trial: str
    status: str
    iterations: int
    env_steps: float | None
    episode_return_mean: float | None
    best_episode_return_mean: float | None
    wall_time_s: float
    checkpoint: str | None
    error: str | None
    # Supervised trials: epochs done and validation accuracy (last and best).
    epochs: int | None = None
    validation_accuracy: float | None = None
    best_validation_accuracy: float | None = None
    # An experiment whose metric is not the return (self-play's win rate): its best value.
    metric: str | None = None
    best_metric: float | None = None
    # Where the last iteration ended no episode: the iteration the return shown is from.
    return_iteration: int | None = None

    def line(self) -> str:
        checkpoint = self.checkpoint or "none"
        if self.epochs is not None:
            text = (
                f"{self.trial} {self.status}: validation accuracy {number_text(self.validation_accuracy, 3)}"
                f" (best {number_text(self.best_validation_accuracy, 3)}) | epochs {self.epochs}"
                f" | wall {self.wall_time_s:.1f} s | checkpoint {checkpoint}"
            )
            return text + (f" | error: {self.error}" if self.error else "")
        best = (
            f" | best {label(self.metric)} {number_text(self.best_metric, 2)}"
            if self.metric
            else ""
        )
        at = f"iteration {self.return_iteration}, " if self.return_iteration else ""
        text = (
            f"{self.trial} {self.status}: return {number_text(self.episode_return_mean)}"
            f" ({at}best {number_text(self.best_episode_return_mean)}){best}"
            f" | env steps {count_text(self.env_steps)} | iterations {self.iterations}"
            f" | wall {self.wall_time_s:.1f} s | checkpoint {checkpoint}"
        )
        return text + (f" | error: {self.error}" if self.error else "")


def summarize(results: ResultGrid, metric: str, mode: str = "max") -> list[TrialSummary]:
    """One summary per trial; `metric` and `mode` are the experiment's (its best is the
    lowest value where `mode` is "min")."""
    summaries = []
    for index, trial_status in enumerate(_trial_statuses(results)):
        result = results[index]
        status = _status(result, trial_status)
        flat = console_result(result.metrics or {})
        supervised = metrics.EPOCH in flat
        other_metric = None if supervised or metric == metrics.EPISODE_RETURN_MEAN else metric
        history = result.metrics_dataframe
        episode_return, return_iteration = _float(flat.get(metrics.EPISODE_RETURN_MEAN)), None
        if episode_return is None and not supervised:
            episode_return, return_iteration = _last_return(history)
        summaries.append(
            TrialSummary(
                trial=Path(result.path).name,
                status=status,
                iterations=int(flat.get(metrics.TRAINING_ITERATION, 0)),
                env_steps=finite(flat.get(metrics.ENV_STEPS_SAMPLED_LIFETIME)),
                # NaN kept (an env's NaN reward): the line says nan, summary.json null
                episode_return_mean=episode_return,
                best_episode_return_mean=None
                if supervised
                else best_of(history, metrics.EPISODE_RETURN_MEAN),
                wall_time_s=float(flat.get(metrics.TIME_TOTAL_S, 0.0)),
                checkpoint=result.checkpoint.path if result.checkpoint else None,
                error=_error(result) if status == "ERROR" else None,
                epochs=int(flat[metrics.EPOCH]) if supervised else None,
                validation_accuracy=finite(flat.get(metrics.VALIDATION_ACCURACY)),
                best_validation_accuracy=best_of(history, metrics.VALIDATION_ACCURACY)
                if supervised
                else None,
                metric=other_metric,
                best_metric=best_of(history, other_metric, mode) if other_metric else None,
                return_iteration=return_iteration,
            )
        )
    return summaries


def _last_return(history: pd.DataFrame | None) -> tuple[float | None, int | None]:
    """The mean return of the last iteration in which episodes ended, and that iteration: a
    run whose last iteration ended none (Pong's 2,000-step episodes, 1,024-step iterations)
    would otherwise sum up as "return n/a"."""
    episodes = metrics.EPISODES_THIS_ITERATION
    if history is None or metrics.EPISODE_RETURN_MEAN not in history or episodes not in history:
        return None, None
    ended = history[history[episodes] > 0]
    if ended.empty:
        return None, None
    last = ended.iloc[-1]
    return _float(last[metrics.EPISODE_RETURN_MEAN]), int(last[metrics.TRAINING_ITERATION])


def _status(result: Result, trial_status: str | None) -> str:
    """ERROR, OK (met its stop criteria or a scheduler stopped it), or INTERRUPTED
    (Ctrl-C or SIGTERM came first: `--resume` continues it). `trial_status` is Tune's
    (None where unknown): Ray 2.60's Result carries an error for every trial that is not
    TERMINATED, a paused or pending one too, and keeps the error of a failure the trial
    was restarted from (`--max-failures`), so `result.error` alone would call a trial
    that failed once and was then paused by Ctrl-C or SIGTERM failed."""
    failed = trial_status == Trial.ERROR if trial_status is not None else bool(result.error)
    if failed:
        return "ERROR"
    return "OK" if (result.metrics or {}).get("done") else "INTERRUPTED"


def _error(result: Result) -> str:
    if result.error is None:  # Tune had no trial folder to write its error.txt to
        return "unknown error (Tune recorded none)"
    return explain(str(result.error), wait_s=AFTER_RUN_LOOKUP_S)


def _trial_statuses(results: ResultGrid) -> list[str | None]:
    """Tune's status of each trial, in the grid's order; None for each where the grid does
    not say (one loaded some other way). Private in Ray 2.60: the grid builds its results
    from its analysis's trials, in that order, and its own `num_errors` counts them so."""
    trials = getattr(getattr(results, "_experiment_analysis", None), "trials", None)
    if trials is None or len(trials) != len(results):
        return [None] * len(results)
    return [trial.status for trial in trials]


def was_interrupted(results: ResultGrid) -> bool:
    """Whether a trial neither failed nor finished: Tune marks the last result of a trial
    that met its stop criteria or was stopped by a scheduler `done`; Ctrl-C does not."""
    return any(
        _status(results[index], trial_status) == "INTERRUPTED"
        for index, trial_status in enumerate(_trial_statuses(results))
    )


def best_value(result: Result, metric: str, mode: str = "max") -> float | None:
    """Best value of `metric` over the trial's whole history (the lowest for mode "min")."""
    return best_of(result.metrics_dataframe, metric, mode)


def best_of(history: pd.DataFrame | None, metric: str, mode: str = "max") -> float | None:
    """Best value of `metric` in a trial's results (one row per result); None without one."""
    if history is None or metric not in history or not history[metric].notna().any():
        return None
    column = history[metric]
    return float(column.min() if mode == "min" else column.max())


def write_summary(path: Path, summaries: list[TrialSummary], **extra: Any) -> None:
    """summary.json: NaN and infinities as null (JSON has no such numbers)."""
    trials = [{k: _jsonnumber_text(v) for k, v in asdict(s).items()} for s in summaries]
    # Whole or not at all: a reader (rlsuite.report, a script polling for the run's end)
    # never sees half a file, and a kill while writing keeps the previous one.
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps({**extra, "trials": trials}, indent=2) + "\n")
    os.replace(partial, path)


def _jsonnumber_text(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _float(value: Any) -> float | None:
    """`value` as a float, NaN and infinities too; None when missing or not a number."""
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
