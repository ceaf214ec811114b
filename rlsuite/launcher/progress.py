"""What the user sees: a line per training result while it runs, a line per trial at the end."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ray.tune import Callback, Result, ResultGrid
from ray.tune.experiment import Trial

from rlsuite import metrics
from rlsuite.launcher.failures import explain


class ProgressPrinter(Callback):
    """One line per training iteration of each trial, in the field's words."""

    def on_trial_result(
        self,
        iteration: int,
        trials: list[Trial],
        trial: Trial,
        result: dict,
        **info: Any,
    ) -> None:
        flat = _flatten(result)
        if metrics.EPOCH in flat:
            print(_supervised_line(trial.trial_id, flat), flush=True)
            return
        line = (
            f"[{trial.trial_id}] iter {flat.get(metrics.TRAINING_ITERATION, 0):>4}"
            f"  env steps {_count(flat.get(metrics.ENV_STEPS_SAMPLED_LIFETIME))}"
            f"  return {_number(flat.get(metrics.EPISODE_RETURN_MEAN))}"
            f"  steps/s {_number(flat.get(metrics.ENV_STEPS_PER_SECOND), 0)}"
            f"  time {flat.get(metrics.TIME_TOTAL_S, 0.0):.1f} s"
        )
        print(line, flush=True)

    def on_trial_error(
        self, iteration: int, trials: list[Trial], trial: Trial, **info: Any
    ) -> None:
        print(
            f"[{trial.trial_id}] failed: {error_line(trial)}",
            file=sys.stderr,
            flush=True,
        )


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

    def line(self) -> str:
        checkpoint = self.checkpoint or "none"
        if self.epochs is not None:
            text = (
                f"{self.trial} {self.status}: validation accuracy {_number(self.validation_accuracy, 3)}"
                f" (best {_number(self.best_validation_accuracy, 3)}) | epochs {self.epochs}"
                f" | wall {self.wall_time_s:.1f} s | checkpoint {checkpoint}"
            )
            return text + (f" | error: {self.error}" if self.error else "")
        text = (
            f"{self.trial} {self.status}: return {_number(self.episode_return_mean)}"
            f" (best {_number(self.best_episode_return_mean)})"
            f" | env steps {_count(self.env_steps)} | iterations {self.iterations}"
            f" | wall {self.wall_time_s:.1f} s | checkpoint {checkpoint}"
        )
        return text + (f" | error: {self.error}" if self.error else "")


def summarize(results: ResultGrid, metric: str) -> list[TrialSummary]:
    summaries = []
    for index in range(len(results)):
        result = results[index]
        flat = _flatten(result.metrics or {})
        best = best_value(result, metric)
        supervised = metrics.EPOCH in flat
        summaries.append(
            TrialSummary(
                trial=Path(result.path).name,
                status="ERROR" if result.error else "OK",
                iterations=int(flat.get(metrics.TRAINING_ITERATION, 0)),
                env_steps=_finite(flat.get(metrics.ENV_STEPS_SAMPLED_LIFETIME)),
                episode_return_mean=_finite(flat.get(metrics.EPISODE_RETURN_MEAN)),
                best_episode_return_mean=None if supervised else best,
                wall_time_s=float(flat.get(metrics.TIME_TOTAL_S, 0.0)),
                checkpoint=result.checkpoint.path if result.checkpoint else None,
                error=explain(str(result.error)) if result.error else None,
                epochs=int(flat[metrics.EPOCH]) if supervised else None,
                validation_accuracy=_finite(flat.get(metrics.VALIDATION_ACCURACY)),
                best_validation_accuracy=best_value(result, metrics.VALIDATION_ACCURACY)
                if supervised
                else None,
            )
        )
    return summaries


def was_interrupted(results: ResultGrid) -> bool:
    """Whether a trial neither failed nor finished: Tune marks the last result of a trial
    that met its stop criteria or was stopped by a scheduler `done`; Ctrl-C does not."""
    for index in range(len(results)):
        result = results[index]
        if not result.error and not (result.metrics or {}).get("done"):
            return True
    return False


def best_value(result: Result, metric: str) -> float | None:
    """Highest value of `metric` over the trial's whole history."""
    frame = result.metrics_dataframe
    if frame is None or metric not in frame or not frame[metric].notna().any():
        return None
    return float(frame[metric].max())


def write_summary(path: Path, summaries: list[TrialSummary], **extra: Any) -> None:
    data = {**extra, "trials": [asdict(s) for s in summaries]}
    path.write_text(json.dumps(data, indent=2) + "\n")


def error_line(trial: Trial) -> str:
    """One line on why a trial failed: the exception the env or learner raised."""
    path = trial.error_file
    if path and Path(path).exists():
        return explain(Path(path).read_text())
    return "unknown error (see the trial's error.txt)"


def _supervised_line(trial_id: str, flat: dict[str, Any]) -> str:
    return (
        f"[{trial_id}] epoch {int(flat[metrics.EPOCH]):>4}"
        f"  train loss {_number(flat.get(metrics.TRAIN_LOSS), 3)}"
        f"  val loss {_number(flat.get(metrics.VALIDATION_LOSS), 3)}"
        f"  val acc {_number(flat.get(metrics.VALIDATION_ACCURACY), 3)}"
        f"  samples/s {_number(flat.get(metrics.SAMPLES_PER_SECOND), 0)}"
        f"  lr {flat.get(metrics.TRAIN_LEARNING_RATE, float('nan')):.3g}"
        f"  time {flat.get(metrics.TIME_TOTAL_S, 0.0):.1f} s"
    )


def _flatten(result: dict, prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in result.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}/"))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _number(value: Any, digits: int = 1) -> str:
    number = _finite(value)
    return "n/a" if number is None else f"{number:.{digits}f}"


def _count(value: Any) -> str:
    number = _finite(value)
    return "n/a" if number is None else f"{int(number):,}"
