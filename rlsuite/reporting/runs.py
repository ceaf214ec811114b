"""Results directories as data: one directory is one config, its trials are its seeds."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.results import lookup, read_results, trial_dirs


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
        return np.array([v if isinstance(v, int | float) else np.nan for v in values], dtype=float)


@dataclass(frozen=True)
class Config:
    """One results directory: trials of one config (seeds, or a PBT population)."""

    label: str
    path: Path
    metric: str
    trials: list[Trial]

    @property
    def env(self) -> str:
        return str(self.trials[0].params.get("env", "unknown env"))


def load(path: Path) -> Config:
    """Every trial of a results directory with at least one result."""
    if not path.is_dir():
        raise UsageError(
            f"{path}: no such directory; give results directories such as results/ppo_cartpole"
        )
    trials = [_trial(d) for d in trial_dirs(path)]
    trials = [t for t in trials if t.results]
    if not trials:
        raise UsageError(
            f"{path}: no trial results here (no */result.json); give a results directory that `python -m rlsuite.run` wrote"
        )
    summary = _json(path / "summary.json")
    metric = summary.get("metric", metrics.EPISODE_RETURN_MEAN)
    return Config(label=path.name, path=path, metric=metric, trials=trials)


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


def pbt_lineage(config: Config) -> list[Exploit]:
    """Tune PBT's exploit log (`pbt_global.txt`), with trial directory names instead of
    Tune's tags; empty when the run was not PBT."""
    log = config.path / "pbt_global.txt"
    if not log.exists():
        return []
    names = [trial.name for trial in config.trials]
    exploits = []
    for line in log.read_text().splitlines():
        entry = json.loads(line) if line.strip() else []
        if len(entry) < 6:
            continue
        trial, source, iteration, source_iteration, source_config, new_config = entry[:6]
        exploits.append(
            Exploit(
                int(iteration),
                _trial_name(str(trial), names),
                _trial_name(str(source), names),
                int(source_iteration),
                source_config,
                new_config,
            )
        )
    return exploits


def _trial_name(tag: str, names: list[str]) -> str:
    """Tune logs a trial by its tag ("3_lr=0.001"); its directory ends in the same trial
    index ("PPO_ab12c_00003")."""
    index = re.match(r"(\d+)_", tag)
    matches = [n for n in names if index and n.endswith(f"_{int(index[1]):05d}")]
    return matches[0] if len(matches) == 1 else tag


def _trial(directory: Path) -> Trial:
    # After a resume, iterations may repeat in result.json: the last result of each wins.
    by_iteration: dict[int, dict[str, Any]] = {}
    for result in read_results(directory / "result.json"):
        by_iteration[int(result.get(metrics.TRAINING_ITERATION, len(by_iteration) + 1))] = result
    results = [by_iteration[i] for i in sorted(by_iteration)]
    return Trial(name=directory.name, params=_json(directory / "params.json"), results=results)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
