"""What Tune keeps of a run's own settings on `--resume`, and the check that the command
asks for those. `Tuner.restore` takes no RunConfig or TuneConfig: the run goes on with the
stop, checkpoints, restarts, trial count, seed grid and concurrency limit it started with,
and another one given with `--resume` would be dropped without a word."""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlsuite.errors import UsageError

if TYPE_CHECKING:
    from rlsuite.experiment import Experiment
    from rlsuite.tracking import Tracking
    from rlsuite.workload import Workload

FRESH = "start afresh with --overwrite (the old run is moved aside) or a new --name"
SEED = "seed"
"""The config key `--seeds` searches over."""


@dataclass(frozen=True)
class RunSettings:
    """What Tune keeps of a run's own settings and restores instead of the command's."""

    stop: Mapping[str, Any]
    checkpoints: Any
    """Tune's CheckpointConfig."""
    max_failures: int
    num_samples: int
    seeds: list[Any] | None
    """The seed grid (`--seeds`, or the file's search); None without one."""
    max_concurrent_trials: int | None
    """The limit `--max-concurrent-trials` asks for; None when it is not given."""
    trackers: Mapping[str, str | None] = field(default_factory=dict)
    """Where results are tracked, by flag (`--mlflow`: the URI, ...; None: not tracked)."""

    @classmethod
    def asked(
        cls,
        experiment: Experiment,
        workload: Workload,
        max_concurrent_trials: int | None,
        tracking: Tracking | None = None,
        name: str = "",
    ) -> RunSettings:
        """What the command asks for: the experiment with its flags applied."""
        if max_concurrent_trials and experiment.searcher is not None:
            # The launcher puts the limit into the searcher's, the lower of the two.
            max_concurrent_trials = min(experiment.searcher.max_concurrent, max_concurrent_trials)
        return cls(
            experiment.stop,
            workload.checkpoint_config(experiment),
            experiment.max_failures,
            experiment.num_samples,
            _grid(experiment.search.get(SEED)),
            max_concurrent_trials,
            _asked_trackers(tracking, name) if tracking is not None else {},
        )


def check_same_settings(experiment_dir: Path, saved: Any, settings: RunSettings) -> None:
    """`saved` (tuner.pkl's contents) holds the settings the command asks for."""
    run_config = saved.get("_run_config") if isinstance(saved, dict) else None
    if run_config is None:  # kept elsewhere by another Tune version: Tune decides
        return
    differ = []
    if dict(run_config.stop or {}) != dict(settings.stop):
        differ.append(f"stop ({_stops(run_config.stop or {})} there, {_stops(settings.stop)} now)")
    if run_config.checkpoint_config != settings.checkpoints:
        differ.append("checkpoints (--checkpoint-every, the file's keep_checkpoints)")
    if run_config.failure_config.max_failures != settings.max_failures:
        was, now = run_config.failure_config.max_failures, settings.max_failures
        differ.append(f"--max-failures ({was} there, {now} now)")
    differ += _other_trials(experiment_dir, saved, settings)
    if settings.trackers:
        there = _saved_trackers(run_config.callbacks or [])
        differ += [
            f"{flag} ({there.get(flag) or 'none'} there, {value or 'none'} now)"
            for flag, value in settings.trackers.items()
            if there.get(flag) != value
        ]
    if differ:
        raise UsageError(
            f"--resume {experiment_dir}: the run was started with another {'; '.join(differ)}, "
            "and Tune resumes a run with its own; resume with the command that started it "
            f"plus --resume, or {FRESH}"
        )


def _asked_trackers(tracking: Tracking, name: str) -> dict[str, str | None]:
    mlflow_experiment = (tracking.mlflow_experiment or name) if tracking.mlflow else None
    return {
        "--mlflow": tracking.mlflow,
        "--mlflow-experiment": mlflow_experiment,
        "--wandb": tracking.wandb,
    }


def _saved_trackers(callbacks: list[Any]) -> dict[str, str | None]:
    """The trackers in the run's pickled callbacks, which Tune restores with it: a tracker
    asked for only on `--resume`, or another URI or project, would never be used. Read by
    class name, so that mlflow and wandb need not be imported to compare."""
    found: dict[str, str | None] = {}
    for callback in callbacks:
        kind = type(callback).__name__
        if kind == "MlflowTracking":
            found["--mlflow"] = getattr(callback, "tracking_uri", None)
            found["--mlflow-experiment"] = getattr(callback, "experiment_name", None)
        elif kind == "WandbTracking":
            found["--wandb"] = getattr(callback, "project", None)
    return found


def _stops(stop: Mapping[str, Any]) -> str:
    return " ".join(
        f"{metric}={value:g}" if isinstance(value, float) else f"{metric}={value}"
        for metric, value in stop.items()
    )


def _other_trials(experiment_dir: Path, saved: dict[str, Any], settings: RunSettings) -> list[str]:
    """Tune restores the run's own TuneConfig: its trial count and concurrency limit, and
    its variant generator with the seed grid it was given. `--seeds` escapes
    check_same_config (a searched key) and Tune's own param-space check (same keys)."""
    tune_config = saved.get("_tune_config")
    if tune_config is None:  # kept elsewhere by another Tune version: Tune decides
        return []
    differ = []
    if tune_config.num_samples != settings.num_samples:
        differ.append(
            f"--num-samples ({tune_config.num_samples} there, {settings.num_samples} now)"
        )
    seeds = _saved_seeds(experiment_dir, saved)
    if not _same_seeds(seeds, settings.seeds):
        differ.append(f"--seeds ({_seeds(seeds)} there, {_seeds(settings.seeds)} now)")
    limit = tune_config.max_concurrent_trials or getattr(
        tune_config.search_alg, "max_concurrent", None
    )
    if settings.max_concurrent_trials is not None and settings.max_concurrent_trials != limit:
        was = limit or "as many as resources allow"
        differ.append(
            f"--max-concurrent-trials ({was} there, {settings.max_concurrent_trials} now)"
        )
    return differ


_UNKNOWN: Any = "\x00 not saved"
_A_GRID: Any = "\x00 a grid"
VARIANT_GLOB = "basic-variant-state-*.json"
"""Tune's variant generator's state (a pickle, despite the name)."""


def _saved_seeds(experiment_dir: Path, saved: dict[str, Any]) -> Any:
    """The run's seed grid: the variant generator's state holds the param space it got
    (tuner.pkl only its keys, which say whether there was one). A searcher (it takes no
    grid) or a grid large enough for Tune to expand lazily leaves no such state."""
    states = sorted(experiment_dir.glob(VARIANT_GLOB))
    if states:
        try:
            with states[-1].open("rb") as file:  # newest: the session's timestamp in the name
                spec = pickle.load(file)["_iterators"][0].unresolved_spec
            return _grid(spec["config"].get(SEED))
        except Exception:  # another Tune version's layout: the keys below
            pass
    keys = saved.get("__flattened_param_space_keys")
    if keys is None:
        return _UNKNOWN
    return _A_GRID if f"{SEED}/grid_search" in keys else None


def _grid(value: Any) -> list[Any] | None:
    return (
        list(value["grid_search"]) if isinstance(value, dict) and "grid_search" in value else None
    )


def _same_seeds(saved: Any, now: list[Any] | None) -> bool:
    if saved is _UNKNOWN:
        return True
    if saved is _A_GRID:  # its values were not saved
        return now is not None
    return bool(saved == now)


def _seeds(seeds: Any) -> str:
    if seeds is None:
        return "none"
    if seeds is _A_GRID:
        return "a seed grid"
    first = seeds[0] if seeds else None
    if isinstance(first, int) and seeds == list(range(first, first + len(seeds))):
        return f"{len(seeds)} seeds from {first}"  # as --seeds N --seed FIRST make them
    text = ", ".join(map(str, seeds))
    return text if len(text) <= 40 else f"{text[:37]}..."
