"""Results directories as data: one directory is one config, its trials are its seeds.

Everything a report reads is read here, by `load`, before anything is written: a
missing, damaged or foreign results directory is one UsageError line.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.results import lookup, read_json, read_results, trial_dirs

PBT_LOG = "pbt_global.txt"  # Tune PBT's exploit log, in the experiment directory
# Final score: the mean of the metric's last values, not one noisy value. Values, not
# iterations: a metric reported every k-th iteration (self-play's win rates, evaluation
# returns) averages its last FINAL_WINDOW reports, over k times as many iterations.
FINAL_WINDOW = 5


@dataclass(frozen=True)
class FinalWindow:
    """Which of a trial's reported values its final score averages: the last `iterations`
    of them, or, with `env_steps`, those of the iterations that end within its last
    `env_steps` env steps, for configs whose iterations sample different numbers of steps
    (a PPO iteration of 3,200 steps beside a QMIX one of 1,000) compared at equal env
    steps."""

    iterations: int = FINAL_WINDOW
    """Reported values, not iterations: see FINAL_WINDOW."""
    env_steps: float | None = None

    def describe(self) -> str:
        """What the window holds, to follow "each trial's" in the report."""
        if self.env_steps is None:
            if self.iterations == 1:
                return "last reported value"
            return f"last {self.iterations} reported values"
        return (
            f"values reported within its last {self.env_steps:,.0f} env steps "
            "(at least its last value)"
        )


@dataclass(frozen=True)
class Trial:
    """One trial's history: results in iteration order, one per training iteration."""

    name: str
    params: dict[str, Any]
    results: list[dict[str, Any]]

    @property
    def seed(self) -> Any:
        return self.params.get("seed")

    def series(self, key: str) -> np.ndarray:
        """Values of a metric per iteration; NaN where a result lacks it."""
        values = [lookup(result, key) for result in self.results]
        return np.array([_as_float(v) for v in values], dtype=float)

    def final_score(self, metric: str, window: FinalWindow | None = None) -> float:
        """The metric's mean over the `window` of its reported values (default: the last
        FINAL_WINDOW of them); NaN when no iteration reports it. An env-step window holds
        at least the last reported value, however many steps its iteration sampled."""
        window = window or FinalWindow()
        values = self.series(metric)
        reported = np.isfinite(values)
        if window.env_steps is None:
            chosen = values[reported][-window.iterations :]
        else:
            steps = self.series(metrics.ENV_STEPS_SAMPLED_LIFETIME)
            within = reported & (steps > np.nanmax(steps) - window.env_steps)
            chosen = values[within] if within.any() else values[reported][-1:]
        return float(chosen.mean()) if len(chosen) else np.nan


@dataclass(frozen=True)
class Exploit:
    """One PBT exploit: `trial` copied `source`'s checkpoint at `iteration` and explored
    from `source`'s config to `new_config`."""

    iteration: int
    trial: str
    source: str
    source_iteration: int
    source_config: dict[str, Any]
    new_config: dict[str, Any]


@dataclass(frozen=True)
class Config:
    """One results directory: trials of one config (seeds, or a PBT population)."""

    label: str
    path: Path
    metric: str
    trials: list[Trial]
    lineage: list[Exploit] = field(default_factory=list)
    """PBT's exploits, with trial directory names; empty when the run was not PBT."""
    mode: str = "max"
    """Whether a higher metric is better ("max") or a lower one ("min")."""

    @property
    def workload(self) -> str:
        """What the trials learn: the RL env, or a supervised run's model and data set
        (rlsuite.supervised's params hold no env)."""
        params = self.trials[0].params
        if "env" in params:
            return str(params["env"])
        parts = [str(params[key]) for key in ("model", "dataset") if key in params]
        return " on ".join(parts) or "unknown"


@dataclass(frozen=True)
class Progress:
    """What a report counts training in: the learning curves' x axis and the tables'
    columns. RL trials count env steps; supervised ones (Ray Train) count epochs."""

    key: str
    label: str
    rate_key: str | None = None
    """Per-second throughput of the same work; None: no throughput column."""
    rate_label: str = ""


ENV_STEPS = Progress(
    metrics.ENV_STEPS_SAMPLED_LIFETIME, "env steps", metrics.ENV_STEPS_PER_SECOND, "env steps/s"
)
# Epochs, not training_iteration: they go on counting across --resume and PBT exploits.
EPOCHS = Progress(metrics.EPOCH, "epochs", metrics.SAMPLES_PER_SECOND, "samples/s")
ITERATIONS = Progress(metrics.TRAINING_ITERATION, "training iterations")


def progress(configs: list[Config]) -> Progress:
    """Env steps where every config reports them, else epochs, else training iterations;
    without the throughput where no config reports it."""
    for candidate in (ENV_STEPS, EPOCHS):
        if all(_reports(config, candidate.key) for config in configs):
            rate = candidate.rate_key
            if rate is not None and not any(_reports(config, rate) for config in configs):
                return dataclasses.replace(candidate, rate_key=None)
            return candidate
    return ITERATIONS


def _reports(config: Config, key: str) -> bool:
    return any(np.isfinite(trial.series(key)).any() for trial in config.trials)


def load(path: Path) -> Config:
    """Every trial of a results directory with at least one result; UsageError (one
    line) for a directory that is missing, damaged or not what `rlsuite.run` writes."""
    if not path.is_dir():
        raise UsageError(
            f"{path}: no such directory; give results directories such as results/ppo_cartpole"
        )
    try:
        directories = trial_dirs(path)
    except OSError as error:
        raise UsageError(f"{path}: cannot be read ({error.strerror})") from None
    trials = [t for t in map(_trial, directories) if t.results]
    if not trials:
        raise UsageError(
            f"{path}: no trial results here (no */result.json); give a results directory that `python -m rlsuite.run` wrote"
        )
    summary = read_json(path / "summary.json") or {}
    metric = summary.get("metric")
    metric = metric if isinstance(metric, str) else metrics.EPISODE_RETURN_MEAN
    mode = "min" if summary.get("mode") == "min" else "max"
    if not any(np.isfinite(t.series(metric)).any() for t in trials):
        raise UsageError(
            f"{path}: no trial reports {metric}; give a results directory that `python -m rlsuite.run` wrote"
        )
    lineage = pbt_lineage(path / PBT_LOG, [t.name for t in trials])
    return Config(
        label=_printable(path.name),
        path=path,
        metric=metric,
        trials=trials,
        lineage=lineage,
        mode=mode,
    )


def pbt_lineage(log: Path, names: list[str]) -> list[Exploit]:
    """Tune PBT's exploit log, with the trial directory names `names` instead of Tune's
    tags; empty when there is no log (the run was not PBT)."""
    if not log.exists():
        return []
    exploits = [_exploit(line, names) for line in _lines(log)]
    return [exploit for exploit in exploits if exploit is not None]


def _exploit(line: str, names: list[str]) -> Exploit | None:
    """One line of the PBT log; None for a line cut short or not Tune's."""
    try:
        entry = json.loads(line)
        trial, source, iteration, source_iteration, source_config, new_config = entry[:6]
        return Exploit(
            int(iteration),
            _trial_name(str(trial), names),
            _trial_name(str(source), names),
            int(source_iteration),
            dict(source_config),
            dict(new_config),
        )
    except (json.JSONDecodeError, TypeError, ValueError, KeyError):
        return None


def _trial_name(tag: str, names: list[str]) -> str:
    """Tune logs a trial by its tag ("3_lr=0.001"); its directory ends in the same trial
    index ("PPO_ab12c_00003")."""
    index = re.match(r"(\d+)_", tag)
    matches = [n for n in names if index and n.endswith(f"_{int(index[1]):05d}")]
    return matches[0] if len(matches) == 1 else tag


def _trial(directory: Path) -> Trial:
    # After a resume, iterations may repeat in result.json: the last result of each wins.
    by_iteration: dict[int, dict[str, Any]] = {}
    for result in _results(directory / "result.json"):
        iteration = result.get(metrics.TRAINING_ITERATION)
        if not isinstance(iteration, int | float) or not math.isfinite(iteration):
            iteration = len(by_iteration) + 1  # another tool's results: in file order
        by_iteration[int(iteration)] = result
    results = [by_iteration[i] for i in sorted(by_iteration)]
    return Trial(
        name=directory.name, params=read_json(directory / "params.json") or {}, results=results
    )


def _results(path: Path) -> list[dict[str, Any]]:
    """Tune's results of a trial (lines that are not JSON objects left out)."""
    try:
        return [r for r in read_results(path) if isinstance(r, dict)]
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(
            f"{path} is damaged ({_reason(error)}); restore it or move that trial out of the results directory"
        ) from None


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(
            f"{path} is damaged ({_reason(error)}); restore it, or delete it to report without the PBT lineage"
        ) from None


def _reason(error: OSError | UnicodeDecodeError) -> str:
    if isinstance(error, OSError):
        return error.strerror or type(error).__name__
    return "not text"


def _printable(name: str) -> str:
    """A folder name whose bytes are not UTF-8 (Python keeps them as lone surrogates, which
    matplotlib cannot draw: a 176-line traceback) with those bytes shown as U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _as_float(value: Any) -> float:
    """A reported number as a float; NaN for anything else, and for an integer past
    float's range (a damaged result.json line)."""
    if not isinstance(value, int | float):
        return np.nan
    try:
        return float(value)
    except OverflowError:
        return np.nan
