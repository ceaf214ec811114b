"""A sweep's view of a results directory: which config values were searched, the best
metric found after each finished trial, and the trials ranked by the metric.

The metric of a trial is its last reported value, as Tune's searchers and schedulers see
it. Trials count in the order they finished (the order a searcher learnt from them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rlsuite.reporting import figures
from rlsuite.reporting.formatting import number, setting
from rlsuite.reporting.runs import Config, Trial
from rlsuite.results import ADDRESS

IGNORED = ("seed",)
"""Keys that differ between trials without being searched (`--seeds`)."""


def searched_keys(config: Config) -> list[str]:
    """Top-level config values (numbers, strings) that differ between trials, seeds aside."""
    values: dict[str, set[Any]] = {}
    for trial in config.trials:
        for key, value in trial.params.items():
            if isinstance(value, int | float | str) and key not in IGNORED:
                if isinstance(value, str):
                    value = ADDRESS.sub("", value)
                values.setdefault(key, set()).add(value)
    return sorted(k for k, v in values.items() if len(v) > 1)


def last_value(trial: Trial, metric: str) -> float:
    values = trial.series(metric)
    values = values[np.isfinite(values)]
    return float(values[-1]) if len(values) else np.nan


def finish_order(config: Config) -> list[Trial]:
    """Trials in the order their last results came."""
    return sorted(config.trials, key=lambda t: (_finished_at(t), t.name))


def best_so_far(config: Config) -> np.ndarray:
    """The best metric over the first n finished trials, for each n."""
    values = np.array([last_value(t, config.metric) for t in finish_order(config)])
    signed = values if config.mode == "max" else -values
    best = np.fmax.accumulate(np.where(np.isfinite(signed), signed, -np.inf))
    best = np.where(np.isfinite(best), best, np.nan)
    return best if config.mode == "max" else -best


def section(config: Config, output: Path) -> list[str]:
    """The report's sweep section (empty when trials differ in nothing but their seed)."""
    keys = searched_keys(config)
    if not keys or len(config.trials) < 2:
        return []
    figure = figures.best_so_far(
        config.label, config.metric, best_so_far(config), output / f"sweep_{config.label}.png"
    )
    reverse = config.mode == "max"
    ranked = sorted(
        config.trials,
        key=lambda t: _rank_key(last_value(t, config.metric), reverse),
    )
    lines = [
        f"### {config.label}: sweep",
        "",
        f"![best so far]({figure.name})",
        "",
        f"Trials ranked by their last `{config.metric}` ({config.mode}); searched values "
        "are those that differ between trials.",
        "",
        f"| rank | trial | {config.metric} | iterations | {' | '.join(keys)} |",
        f"| ---: | --- | ---: | ---: |{' ---: |' * len(keys)}",
    ]
    for rank, trial in enumerate(ranked, start=1):
        cells = " | ".join(setting(trial.params.get(key)) for key in keys)
        iterations = len(trial.results)
        lines.append(
            f"| {rank} | {trial.name} | {number(last_value(trial, config.metric))} | {iterations} | {cells} |"
        )
    return [*lines, ""]


def _rank_key(value: float, reverse: bool) -> float:
    if not np.isfinite(value):
        return np.inf  # trials without the metric last
    return -value if reverse else value


def _finished_at(trial: Trial) -> float:
    stamp = trial.results[-1].get("timestamp") if trial.results else None
    return float(stamp) if isinstance(stamp, int | float) else np.inf


__all__ = ["best_so_far", "finish_order", "last_value", "searched_keys", "section"]
