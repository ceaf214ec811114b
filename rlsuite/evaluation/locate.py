"""From a path the user gives to the checkpoint to evaluate and the env it was trained on.

Also the layout of the checkpoints it finds: the marker RLlib writes into an Algorithm
checkpoint, the parts of it that evaluation restores, and the files of a supervised one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.results import ERROR_FILE, lookup, read_json, read_results, trial_dirs
from rlsuite.supervised.checkpoint import MODEL_FILE, STATE_FILE
from rlsuite.tracebacks import first_cause

CHECKPOINT_MARKER = "rllib_checkpoint.json"  # written by RLlib into every Algorithm checkpoint
CHECKPOINT_PATTERN = re.compile(r"checkpoint_(\d+)$")
# The parts of an RLlib Algorithm checkpoint that evaluation restores.
MODULES_DIR = Path("learner_group/learner/rl_module")
ENV_TO_MODULE_DIR = Path("env_runner/env_to_module_connector")
MODULE_TO_ENV_DIR = Path("env_runner/module_to_env_connector")


@dataclass(frozen=True)
class Target:
    """A checkpoint to evaluate, the trial it came from and the env it was trained on."""

    checkpoint: Path
    trial: str | None
    env: str | None
    env_config: dict[str, Any] = field(default_factory=dict)
    experiment_file: Path | None = None
    """The experiment file of the run (summary.json): loading it registers its envs."""


def locate(path: Path, trial: str | None = None, checkpoint: str | None = None) -> Target:
    """The checkpoint `path` stands for: a checkpoint, a trial or an experiment directory.

    In an experiment directory the trial is `trial` if given, else the best by the
    experiment's metric (its history's best value). The checkpoint is the trial's
    `checkpoint` (a name such as checkpoint_000003) if given, else its latest.
    """
    if not path.is_dir():
        raise UsageError(
            f"{path}: no such directory; give an experiment results directory or a checkpoint_NNNNNN directory"
        )
    if is_checkpoint(path):
        if checkpoint is not None:
            raise UsageError(
                f"--checkpoint {checkpoint}: {path} is a checkpoint already; give its trial directory or drop --checkpoint"
            )
        _no_trial_choice(trial, path, "a checkpoint")
        return _target(path, path.parent if (path.parent / "params.json").exists() else None)
    if (path / "params.json").exists():
        _no_trial_choice(trial, path, "a trial")
        chosen = path
    else:
        trials = trial_dirs(path)
        if not trials:
            raise UsageError(
                f"{path}: no trials or checkpoints here; give an experiment results directory (results/<name>) or a checkpoint_NNNNNN directory"
            )
        chosen = _named_trial(trials, trial) if trial is not None else best_trial(path, trials)
    picked = (
        named_checkpoint(chosen, checkpoint)
        if checkpoint is not None
        else latest_checkpoint(chosen)
    )
    return _target(picked, chosen)


def _no_trial_choice(trial: str | None, path: Path, kind: str) -> None:
    """`--trial` picks among an experiment's trials: with one trial or checkpoint given,
    ignoring it would evaluate something other than what was asked for."""
    if trial is not None:
        raise UsageError(
            f"--trial {trial}: {path} is {kind} already; give the experiment directory "
            "(its parent folder) or drop --trial"
        )


def checkpoint_index(directory: Path) -> int | None:
    """N of a checkpoint_N directory name; None for other names."""
    match = CHECKPOINT_PATTERN.match(directory.name)
    return int(match.group(1)) if match else None


def checkpoint_dirs(trial_dir: Path) -> list[Path]:
    """The trial's checkpoint_N directories, oldest first (complete or not)."""
    found = [p for p in trial_dir.iterdir() if p.is_dir() and checkpoint_index(p) is not None]
    return sorted(found, key=lambda p: checkpoint_index(p) or 0)


def latest_checkpoint(trial_dir: Path) -> Path:
    """The trial's newest checkpoint directory; UsageError when it has none."""
    checkpoints = checkpoint_dirs(trial_dir)
    if not checkpoints:
        raise UsageError(
            f"{trial_dir}: this trial has no checkpoints; train with --checkpoint-every N (or let it finish: one is written at the end)"
        )
    return checkpoints[-1]


def named_checkpoint(trial_dir: Path, name: str) -> Path:
    """`--checkpoint NAME`: checkpoint_000003, or its number 3."""
    if name.isdigit():
        name = f"checkpoint_{int(name):06d}"
    if Path(name).name != name:  # a path would reach into another trial or run
        raise UsageError(
            f"--checkpoint {name}: give a checkpoint's name (checkpoint_000003) or number; "
            "to evaluate a checkpoint by its path, pass the path itself instead of the run"
        )
    chosen = trial_dir / name
    if checkpoint_index(chosen) is None or not chosen.is_dir():
        known = ", ".join(p.name for p in checkpoint_dirs(trial_dir)) or "none"
        raise UsageError(
            f"--checkpoint {name}: no such checkpoint in {trial_dir}; choose one of {known}"
        )
    return chosen


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
    if not isinstance(metric, str):
        metric = metrics.EPISODE_RETURN_MEAN
    lowest = summary.get("mode") == "min"
    with_checkpoints = [t for t in trials if checkpoint_dirs(t)]
    failed = [t for t in trials if (t / ERROR_FILE).is_file()]
    if not with_checkpoints and failed:
        raise UsageError(
            f"{experiment_dir}: no trial has checkpoints: {failed[0].name} failed before its "
            f"first ({_error_of(failed[0])}; its traceback: {failed[0] / ERROR_FILE})"
        )
    if not with_checkpoints:
        raise UsageError(
            f"{experiment_dir}: no trial has checkpoints; train with --checkpoint-every N"
        )
    return max(with_checkpoints, key=lambda t: _score(t / "result.json", metric, lowest))


def _error_of(trial_dir: Path) -> str:
    try:
        return first_cause((trial_dir / ERROR_FILE).read_text(errors="replace"))
    except OSError as error:
        return f"{ERROR_FILE} unreadable: {error.strerror}"


def _score(result_file: Path, metric: str, lowest: bool) -> float:
    """The trial's best value of `metric`, negated where the lowest is best, so that the
    best trial scores highest; -inf without a readable value (last in line)."""
    try:
        results = read_results(result_file)
    except (OSError, UnicodeDecodeError):
        return -math.inf  # unreadable history: the trial can still be evaluated by name
    values = [lookup(r, metric) if isinstance(r, dict) else None for r in results]
    finite = [float(v) for v in values if isinstance(v, int | float) and math.isfinite(v)]
    if not finite:
        return -math.inf
    return -min(finite) if lowest else max(finite)


def _named_trial(trials: list[Path], name: str) -> Path:
    matches = [t for t in trials if t.name == name or t.name.endswith(f"_{name}")]
    if len(matches) != 1:
        known = ", ".join(t.name for t in trials)
        raise UsageError(f"--trial {name}: no single trial of that name; choose one of {known}")
    return matches[0]


def _target(checkpoint: Path, trial_dir: Path | None) -> Target:
    params = read_json(trial_dir / "params.json") if trial_dir else None
    env = params.get("env") if params else None
    env_config = params.get("env_config") if params else None
    summary = read_json(trial_dir.parent / "summary.json") if trial_dir else None
    source = summary.get("experiment_file") if summary else None
    return Target(
        # Absolute: RLlib's RLModule.from_checkpoint reads a path as a pyarrow URI, and a
        # relative one ("results/...") is refused there with "URI has empty scheme".
        checkpoint=checkpoint.absolute(),
        trial=trial_dir.name if trial_dir else None,
        env=env if isinstance(env, str) else None,
        env_config=dict(env_config) if isinstance(env_config, dict) else {},
        experiment_file=Path(source) if isinstance(source, str) else None,
    )
