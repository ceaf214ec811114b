"""What the user sees: a line per training result while it runs and a line per trial at the
end (how far a trial is toward its stop criteria: `rlsuite.launcher.stop_progress`)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ray.tune import Callback, Result, ResultGrid
from ray.tune.experiment import Trial

from rlsuite import metrics
from rlsuite.launcher.console import terminal
from rlsuite.launcher.failures import explain

if TYPE_CHECKING:
    import pandas as pd

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
    (metrics.ENV_STEPS_SAMPLED_LIFETIME, "env steps", lambda value: _count(value)),
    (metrics.EPISODE_RETURN_MEAN, "return", lambda value: _number(value)),
    (metrics.ENV_STEPS_PER_SECOND, "steps/s", lambda value: _number(value, 0)),
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
                fields.append(f"{label(key)} {_number(flat[key], 2)}")
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
                f"{self.trial} {self.status}: validation accuracy {_number(self.validation_accuracy, 3)}"
                f" (best {_number(self.best_validation_accuracy, 3)}) | epochs {self.epochs}"
                f" | wall {self.wall_time_s:.1f} s | checkpoint {checkpoint}"
            )
            return text + (f" | error: {self.error}" if self.error else "")
        best = f" | best {label(self.metric)} {_number(self.best_metric, 2)}" if self.metric else ""
        at = f"iteration {self.return_iteration}, " if self.return_iteration else ""
        text = (
            f"{self.trial} {self.status}: return {_number(self.episode_return_mean)}"
            f" ({at}best {_number(self.best_episode_return_mean)}){best}"
            f" | env steps {_count(self.env_steps)} | iterations {self.iterations}"
            f" | wall {self.wall_time_s:.1f} s | checkpoint {checkpoint}"
        )
        return text + (f" | error: {self.error}" if self.error else "")


def summarize(results: ResultGrid, metric: str, mode: str = "max") -> list[TrialSummary]:
    """One summary per trial; `metric` and `mode` are the experiment's (its best is the
    lowest value where `mode` is "min")."""
    summaries = []
    for index in range(len(results)):
        result = results[index]
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
                status=_status(result),
                iterations=int(flat.get(metrics.TRAINING_ITERATION, 0)),
                env_steps=finite(flat.get(metrics.ENV_STEPS_SAMPLED_LIFETIME)),
                # NaN kept (an env's NaN reward): the line says nan, summary.json null
                episode_return_mean=episode_return,
                best_episode_return_mean=None
                if supervised
                else best_of(history, metrics.EPISODE_RETURN_MEAN),
                wall_time_s=float(flat.get(metrics.TIME_TOTAL_S, 0.0)),
                checkpoint=result.checkpoint.path if result.checkpoint else None,
                error=explain(str(result.error)) if result.error else None,
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


def _status(result: Result) -> str:
    """ERROR, OK (met its stop criteria or a scheduler stopped it), or INTERRUPTED
    (Ctrl-C or SIGTERM came first: `--resume` continues it)."""
    if result.error:
        return "ERROR"
    return "OK" if (result.metrics or {}).get("done") else "INTERRUPTED"


def was_interrupted(results: ResultGrid) -> bool:
    """Whether a trial neither failed nor finished: Tune marks the last result of a trial
    that met its stop criteria or was stopped by a scheduler `done`; Ctrl-C does not."""
    return any(_status(results[index]) == "INTERRUPTED" for index in range(len(results)))


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
    trials = [{k: _json_number(v) for k, v in asdict(s).items()} for s in summaries]
    path.write_text(json.dumps({**extra, "trials": trials}, indent=2) + "\n")


def _json_number(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _float(value: Any) -> float | None:
    """`value` as a float, NaN and infinities too; None when missing or not a number."""
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


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


def _number(value: Any, digits: int = 1) -> str:
    number = finite(value)
    return _no_number(value) if number is None else f"{number:.{digits}f}"


def _count(value: Any) -> str:
    number = finite(value)
    return _no_number(value) if number is None else f"{int(number):,}"


def _no_number(value: Any) -> str:
    """NaN and infinities as such (an env's NaN reward, a diverged loss): "n/a" would read
    as "no episode finished yet", which is what it says for a missing value."""
    try:
        return str(float(value)) if value is not None else "n/a"
    except (TypeError, ValueError):
        return "n/a"
