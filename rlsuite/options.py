"""`RunOptions`: everything a run takes besides the experiment file.

One frozen dataclass for the command line (`python -m rlsuite.run`, whose flags have
these names) and the Python entry point (`rlsuite.launch(...)`, whose keyword arguments
have them too), so both go through the same checks.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Any

DEFAULT_STORAGE_PATH = "./results"


@dataclass(frozen=True)
class RunOptions:
    smoke: bool = False
    """Shrink the experiment to a CPU run of seconds (`rlsuite.launcher.smoke`)."""
    sets: tuple[str, ...] = ()
    """`PATH=VALUE` config edits, applied in order (`--set`)."""
    stops: tuple[str, ...] = ()
    """`METRIC=VALUE` stop criteria that replace the experiment's (`--stop`)."""
    num_samples: int | None = None
    seed: int | None = None
    seeds: int | None = None
    """Run the config as N trials seeded SEED..SEED+N-1."""
    name: str | None = None
    """Results folder name under the storage path (default: the experiment file's stem)."""
    storage_path: str = DEFAULT_STORAGE_PATH
    address: str | None = None
    """Join a running Ray cluster instead of starting a local one."""
    max_concurrent_trials: int | None = None
    num_env_runners: int | None = None
    num_envs_per_env_runner: int | None = None
    num_learners: int | None = None
    num_gpus_per_learner: float | None = None
    num_cpus_per_env_runner: float | None = None
    num_cpus_per_learner: float | None = None
    checkpoint_every: int | None = None
    max_failures: int | None = None
    """Times Tune restarts a failed trial from its last checkpoint (and RLlib its crashed
    env runners); None keeps the experiment's `max_failures`."""
    resume: bool = False
    overwrite: bool = False
    """Move a finished or broken run at STORAGE_PATH/NAME aside (to NAME.replaced-TIME)
    and start afresh, instead of refusing to touch it."""
    verbose: bool = False
    """Show Ray's own output on the terminal (it always goes to the run's logs/)."""
    quiet: bool = False
    """Print only the summary, nothing per iteration."""
    as_test: bool = False
    """Exit 1 (`RunResult.passed` False) unless a trial reached the stop return."""
    mlflow: str | None = None
    """MLflow tracking URI (a server `http://HOST:PORT`, or a `file:` / `sqlite:` store):
    one MLflow run per trial (docs/tracking.md)."""
    mlflow_experiment: str | None = None
    """MLflow experiment of the runs (default: the run's name)."""
    wandb: str | None = None
    """Weights & Biases project: one W&B run per trial (`WANDB_MODE=offline` honoured)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        """The options of a parsed `python -m rlsuite.run` command line."""
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in vars(args).items() if k in names}
        for key in ("sets", "stops"):
            known[key] = tuple(known.get(key) or ())
        return cls(**known)


def set_assignments(overrides: Any) -> tuple[str, ...]:
    """`--set` texts from what `rlsuite.launch(overrides=...)` takes: a mapping of
    `PATH: value` (Python values) or `PATH=VALUE` texts as on the command line."""
    if overrides is None:
        return ()
    if isinstance(overrides, dict):
        return tuple(f"{path}={value!r}" for path, value in overrides.items())
    if isinstance(overrides, str):
        return (overrides,)
    return tuple(overrides)
