"""What a tracker records of a trial: the suite's named metrics (not Tune's hundreds of
result keys, nor the config that Tune copies into every result), the flattened config
as parameters, and tags that say where the trial came from."""

from __future__ import annotations

import math
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rlsuite import metrics
from rlsuite.launcher.progress import flat_result

NAMED_METRICS = (
    metrics.TRAINING_ITERATION,
    metrics.TIME_TOTAL_S,
    metrics.EPISODE_RETURN_MEAN,
    metrics.EPISODE_RETURN_MAX,
    metrics.EPISODE_LEN_MEAN,
    metrics.EPISODES_LIFETIME,
    metrics.ENV_STEPS_SAMPLED_LIFETIME,
    metrics.ENV_STEPS_TRAINED_LIFETIME,
    metrics.MODULE_STEPS_TRAINED_LIFETIME,
    metrics.EVALUATION_RETURN_MEAN,
    metrics.WIN_RATE,
    metrics.ENV_STEPS_PER_SECOND,
    metrics.LEARNER_SAMPLES_PER_SECOND,
    metrics.SAMPLING_TIME_S,
    metrics.LEARNING_TIME_S,
    *metrics.SUPERVISED_METRICS,
)
"""Result keys logged under their own names (the names TensorBoard shows after `ray/tune/`)."""
NAMED_PREFIXES = (
    f"{metrics.AGENT_RETURN_MEAN_PREFIX}/",
    f"{metrics.POLICY_RETURN_MEAN_PREFIX}/",
    f"{metrics.SELFPLAY_RESULTS}/",
)
"""Keys with an id after them: per-agent and per-policy returns, self-play scores."""
LEARNER_STATS = tuple(
    key.rsplit("/", 1)[1]
    for key in (
        metrics.POLICY_LOSS,
        metrics.VF_LOSS,
        metrics.TOTAL_LOSS,
        metrics.QF_LOSS,
        metrics.ENTROPY,
        metrics.LEARNING_RATE,
    )
)
"""Learner statistics logged for every RLModule (`metrics.learner_metric(stat, module)`)."""


def tracked_names(metric: str, stop: Iterable[str]) -> frozenset[str]:
    """The named metrics plus the experiment's own metric and stop keys."""
    return frozenset((*NAMED_METRICS, metric, *stop))


def tracked_metrics(result: Mapping[str, Any], names: frozenset[str]) -> dict[str, float]:
    """The numeric values of the tracked keys in a Tune result, by flattened key."""
    kept: dict[str, float] = {}
    for key, value in flat_result(dict(result)).items():
        if not _is_tracked(key, names) or isinstance(value, str):
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if not math.isnan(number):
            kept[key] = number
    return kept


def _is_tracked(key: str, names: frozenset[str]) -> bool:
    if key in names or key.startswith(NAMED_PREFIXES):
        return True
    parts = key.split("/")
    return (
        len(parts) == 3
        and parts[2] in LEARNER_STATS
        and metrics.learner_metric(parts[2], parts[1]) == key
    )


def config_params(config: Mapping[str, Any]) -> dict[str, str]:
    """A trial's config flattened to `group/key` parameters with text values."""
    return {key: str(value) for key, value in flat_result(dict(config)).items()}


def run_tags(experiment_file: Path | None) -> dict[str, str]:
    """Tags of every trial of a run: the experiment file and, in a git checkout, its commit."""
    if experiment_file is None:
        return {}
    tags = {"experiment_file": str(experiment_file)}
    commit = git_commit(experiment_file.parent)
    if commit:
        tags["git_commit"] = commit
    return tags


def git_commit(folder: Path) -> str | None:
    """The commit checked out where `folder` is, or None outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None
