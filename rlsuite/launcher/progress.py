"""What the user sees: a line per training result while it runs (how far a trial is toward
its stop criteria: `rlsuite.launcher.stop_progress`; the line per trial at the end and
summary.json: `rlsuite.launcher.summary`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ray.tune import Callback
from ray.tune.experiment import Trial

from rlsuite import metrics
from rlsuite.launcher.console import terminal
from rlsuite.launcher.failures import explain

if TYPE_CHECKING:
    pass

_LABELS = {
    metrics.TRAINING_ITERATION: "iter",
    metrics.TIME_TOTAL_S: "s",
    metrics.ENV_STEPS_SAMPLED_LIFETIME: "env steps",
    metrics.EPISODES_LIFETIME: "episodes",
    metrics.EPOCH: "epochs",
    metrics.EPISODE_RETURN_MEAN: "return",
    metrics.EVALUATION_RETURN_MEAN: "eval return",
    metrics.VALIDATION_ACCURACY: "val acc",
    metrics.VALIDATION_LOSS: "val loss",
}
# The fields every per-iteration line shows, in order: (key, name on the line, format).
_EVERY_LINE: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    (metrics.TRAINING_ITERATION, "iter", lambda value: f"{0 if value is None else value:>4}"),
    (metrics.ENV_STEPS_SAMPLED_LIFETIME, "env steps", lambda value: count_text(value)),
    (metrics.EPISODE_RETURN_MEAN, "return", lambda value: number_text(value)),
    (metrics.ENV_STEPS_PER_SECOND, "steps/s", lambda value: number_text(value, 0)),
    (metrics.TIME_TOTAL_S, "time", lambda value: f"{0.0 if value is None else value:.1f} s"),
)


def label(key: str) -> str:
    """A metric's short name for a column or a line: "return", "env steps"."""
    if key in _LABELS:
        return _LABELS[key]
    short = [name for name, full in metrics.BY_NAME.items() if full == key]
    return short[0] if short else key.rsplit("/", 1)[-1]


class ProgressPrinter(Callback):
    """One line per training iteration of each trial, in the field's words: the counters,
    the return, and the experiment's metric and stop values where they are something else
    (self-play's win rates, an evaluation return) and the result has them."""

    # Class defaults: a callback pickled with an older run (`--resume`) lacks them.
    _stop: Mapping[str, float] = MappingProxyType({})
    _metric = ""

    def __init__(self, stop: Mapping[str, float] | None = None, metric: str = "") -> None:
        self._stop = dict(stop or {})
        self._metric = metric

    def on_trial_result(
        self,
        iteration: int,
        trials: list[Trial],
        trial: Trial,
        result: dict,
        **info: Any,
    ) -> None:
        flat = console_result(result)
        if metrics.EPOCH in flat:
            print(_supervised_line(trial.trial_id, flat), file=terminal(), flush=True)
            return
        fields = [f"{name} {show(flat.get(key))}" for key, name, show in _EVERY_LINE]
        shown = {key for key, _, _ in _EVERY_LINE}
        for key in dict.fromkeys([self._metric, *self._stop]):
            if key in flat and key not in shown:
                fields.append(f"{label(key)} {number_text(flat[key], 2)}")
        line = f"[{trial.trial_id}] " + "  ".join(fields)
        print(line, file=terminal(), flush=True)

    def on_trial_error(
        self, iteration: int, trials: list[Trial], trial: Trial, **info: Any
    ) -> None:
        print(
            f"[{trial.trial_id}] failed: {error_line(trial)}",
            file=terminal(err=True),
            flush=True,
        )


def error_line(trial: Trial) -> str:
    """One line on why a trial failed: the exception the env or learner raised."""
    path = trial.error_file
    if path and Path(path).exists():
        return explain(Path(path).read_text())
    return "unknown error (see the trial's error.txt)"


def _supervised_line(trial_id: str, flat: dict[str, Any]) -> str:
    return (
        f"[{trial_id}] epoch {int(flat[metrics.EPOCH]):>4}"
        f"  train loss {number_text(flat.get(metrics.TRAIN_LOSS), 3)}"
        f"  val loss {number_text(flat.get(metrics.VALIDATION_LOSS), 3)}"
        f"  val acc {number_text(flat.get(metrics.VALIDATION_ACCURACY), 3)}"
        f"  samples/s {number_text(flat.get(metrics.SAMPLES_PER_SECOND), 0)}"
        f"  lr {flat.get(metrics.TRAIN_LEARNING_RATE, float('nan')):.3g}"
        f"  time {flat.get(metrics.TIME_TOTAL_S, 0.0):.1f} s"
    )


def flat_result(result: dict, prefix: str = "") -> dict[str, Any]:
    """A Tune result with nested keys joined by "/", as `rlsuite.metrics` names them."""
    flat: dict[str, Any] = {}
    for key, value in result.items():
        if isinstance(value, dict):
            flat.update(flat_result(value, f"{prefix}{key}/"))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def console_result(result: dict) -> dict[str, Any]:
    """`flat_result` as the lines, the live view and the summary show it: the mean return of
    an iteration where no episode ended is None. Ray 2.60 reports it as NaN, which the
    console keeps for a real NaN (an env's NaN reward), so an iteration shorter than an
    episode would read "return nan" (ppo_cartpole.py's 1,024-step iterations, once episodes
    last 500 steps)."""
    flat = flat_result(result)
    if flat.get(metrics.EPISODES_THIS_ITERATION) == 0 and metrics.EPISODE_RETURN_MEAN in flat:
        flat[metrics.EPISODE_RETURN_MEAN] = None
    return flat


def finite(value: Any) -> float | None:
    """`value` as a float, or None when it is missing, not a number, NaN or infinite."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def number_text(value: Any, digits: int = 1) -> str:
    number = finite(value)
    return _nonumber_text(value) if number is None else f"{number:.{digits}f}"


def count_text(value: Any) -> str:
    number = finite(value)
    return _nonumber_text(value) if number is None else f"{int(number):,}"


def _nonumber_text(value: Any) -> str:
    """NaN and infinities as such (an env's NaN reward, a diverged loss): "n/a" would read
    as "no episode finished yet", which is what it says for a missing value."""
    try:
        return str(float(value)) if value is not None else "n/a"
    except (TypeError, ValueError):
        return "n/a"
