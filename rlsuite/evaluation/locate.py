"""From a path the user gives to the checkpoint to evaluate and the env it was trained on."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.results import lookup, read_json, read_results, trial_dirs
from rlsuite.supervised.checkpoint import MODEL_FILE, STATE_FILE

CHECKPOINT_MARKER = "rllib_checkpoint.json"  # written by RLlib into every Algorithm checkpoint
CHECKPOINT_PATTERN = re.compile(r"checkpoint_(\d+)$")


@dataclass(frozen=True)
class Target:
    """A checkpoint to evaluate, the trial it came from and the env it was trained on."""

    checkpoint: Path
    trial: str | None
    env: str | None
    env_config: dict[str, Any] = field(default_factory=dict)


def locate(path: Path, trial: str | None = None) -> Target:
    """The checkpoint `path` stands for: a checkpoint, a trial or an experiment directory.

    In an experiment directory the trial is `trial` if given, else the best by the
    experiment's metric (its history's best value), and the checkpoint is its latest.
    """
    if not path.is_dir():
        raise UsageError(
            f"{path}: no such directory; give an experiment results directory or a checkpoint_NNNNNN directory"
        )
    if is_checkpoint(path):
        return _target(path, path.parent if (path.parent / "params.json").exists() else None)
    if (path / "params.json").exists():
        return _target(latest_checkpoint(path), path)
    trials = trial_dirs(path)
    if not trials:
        raise UsageError(
            f"{path}: no trials or checkpoints here; give an experiment results directory (results/<name>) or a checkpoint_NNNNNN directory"
        )
    chosen = _named_trial(trials, trial) if trial else best_trial(path, trials)
    return _target(latest_checkpoint(chosen), chosen)


def latest_checkpoint(trial_dir: Path) -> Path:
    checkpoints = [
        p for p in trial_dir.iterdir() if CHECKPOINT_PATTERN.match(p.name) and is_checkpoint(p)
    ]
    if not checkpoints:
        raise UsageError(
            f"{trial_dir}: this trial has no checkpoints; train with --checkpoint-every N (or let it finish: one is written at the end)"
        )
    return max(checkpoints, key=lambda p: int(CHECKPOINT_PATTERN.match(p.name).group(1)))  # type: ignore[union-attr]


def is_checkpoint(directory: Path) -> bool:
    """An RLlib Algorithm checkpoint or a supervised one."""
    return (directory / CHECKPOINT_MARKER).exists() or is_supervised_checkpoint(directory)


def is_supervised_checkpoint(directory: Path) -> bool:
    """What the supervised loop writes (`rlsuite.supervised.checkpoint`)."""
    return (directory / STATE_FILE).is_file() and (directory / MODEL_FILE).is_file()


def best_trial(experiment_dir: Path, trials: list[Path]) -> Path:
    """The trial with the best value of the experiment's metric over its history."""
    summary = read_json(experiment_dir / "summary.json") or {}
    metric = summary.get("metric", metrics.EPISODE_RETURN_MEAN)
    sign = -1.0 if summary.get("mode") == "min" else 1.0
    with_checkpoints = [
        t for t in trials if any(CHECKPOINT_PATTERN.match(p.name) for p in t.iterdir())
    ]
    if not with_checkpoints:
        raise UsageError(
            f"{experiment_dir}: no trial has checkpoints; train with --checkpoint-every N"
        )
    return max(with_checkpoints, key=lambda t: sign * _best_value(t / "result.json", metric))


def _best_value(result_file: Path, metric: str) -> float:
    values = [lookup(r, metric) for r in read_results(result_file)]
    finite = [float(v) for v in values if isinstance(v, int | float) and math.isfinite(v)]
    return max(finite, default=-math.inf)


def _named_trial(trials: list[Path], name: str) -> Path:
    matches = [t for t in trials if t.name == name or t.name.endswith(f"_{name}")]
    if len(matches) != 1:
        known = ", ".join(t.name for t in trials)
        raise UsageError(f"--trial {name}: no single trial of that name; choose one of {known}")
    return matches[0]


def _target(checkpoint: Path, trial_dir: Path | None) -> Target:
    params = read_json(trial_dir / "params.json") if trial_dir else None
    env = params.get("env") if params else None
    return Target(
        checkpoint=checkpoint,
        trial=trial_dir.name if trial_dir else None,
        env=env if isinstance(env, str) else None,
        env_config=dict(params.get("env_config") or {}) if params else {},
    )
