"""`RunOptions`: everything a run takes besides the experiment file.

One frozen dataclass for the command line (`python -m rlsuite.run`, whose flags have
these names) and the Python entry point (`rlsuite.launch(...)`, whose keyword arguments
have them too), so both go through the same checks: the parser reads each number flag
with the function `CHECKS` names for it (a test holds the two together), and `RunOptions`
holds Python values to the same ones.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import numbers
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rlsuite.errors import UsageError
from rlsuite.flags import (
    ObjectAssignment,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
)

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
    no_search: bool = False
    """Run the experiment's own config values: drop its search space and searcher (its
    scheduler stays), so `--set` may edit a key the search would have set."""
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
    """MLflow tracking URI (a server `http://HOST:PORT`, or a database store `sqlite:///...`):
    one MLflow run per trial (docs/tracking.md)."""
    mlflow_experiment: str | None = None
    """MLflow experiment of the runs (default: the run's name)."""
    wandb: str | None = None
    """Weights & Biases project: one W&B run per trial (`WANDB_MODE=offline` honoured)."""

    def __post_init__(self) -> None:
        """Python values held to the flags' checks (argparse has applied them to flags)."""
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                object.__setattr__(self, field.name, _checked(field, value))
        if self.verbose and self.quiet:
            raise UsageError("verbose and quiet: choose one")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        """The options of a parsed `python -m rlsuite.run` command line."""
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in vars(args).items() if k in names}
        for key in ("sets", "stops"):
            known[key] = tuple(known.get(key) or ())
        return cls(**known)

    @classmethod
    def from_launch(cls, overrides: Any, name: str | None, options: dict[str, Any]) -> RunOptions:
        """The options of `rlsuite.launch(..., overrides=..., name=..., **options)`."""
        choices = {f.name for f in dataclasses.fields(cls)} - {"sets"}
        unknown = sorted(set(options) - choices)
        if unknown:
            hint = " (--set edits are overrides=[...])" if "sets" in unknown else ""
            raise UsageError(
                f"rlsuite.launch: unknown option(s) {', '.join(unknown)}{hint}; "
                f"choose from {', '.join(sorted(choices | {'overrides'}))}"
            )
        stops = options.get("stops")
        if isinstance(stops, Mapping):
            options["stops"] = tuple(f"{k}={v}" for k, v in stops.items())
        try:
            return cls(name=name, sets=set_assignments(overrides), **options)
        except UsageError as error:
            raise UsageError(f"rlsuite.launch: {error}") from None


CHECKS: dict[str, Callable[[str], Any]] = {
    "num_samples": positive_int,
    "seed": non_negative_int,
    "seeds": positive_int,
    "max_concurrent_trials": positive_int,
    "num_env_runners": non_negative_int,
    "num_envs_per_env_runner": positive_int,
    "num_learners": non_negative_int,
    "num_gpus_per_learner": non_negative_float,
    "num_cpus_per_env_runner": positive_float,
    "num_cpus_per_learner": positive_float,
    "checkpoint_every": positive_int,
    "max_failures": non_negative_int,
}
"""Each number option's flag type (`python -m rlsuite.run` reads the flag with it)."""

WHOLE = (positive_int, non_negative_int)


def _checked(field: dataclasses.Field[Any], value: Any) -> Any:
    """`value` as option `field` takes it (an int for a count), or UsageError."""
    name, check = field.name, CHECKS.get(field.name)
    if check is not None:
        whole = check in WHOLE
        number = numbers.Integral if whole else numbers.Real
        if isinstance(value, bool) or not isinstance(value, number):
            what = "a whole number" if whole else "a number"
            raise UsageError(f"{name}={value!r}: expected {what}, got {type(value).__name__}")
        try:  # the flag's own bounds, in its words
            return check(str(value) if whole else str(float(value)))
        except argparse.ArgumentTypeError as error:
            raise UsageError(f"{name}={value!r}: {error}") from None
    kind = str(field.type)  # the annotation's text (`from __future__ import annotations`)
    if kind == "bool" and not isinstance(value, bool):
        raise UsageError(f"{name}={value!r}: expected True or False")
    if kind.startswith("tuple"):
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"{name}={value!r}: expected a list of 'KEY=VALUE' strings")
        return tuple(value)
    if name == "storage_path" and isinstance(value, os.PathLike):
        return os.fspath(value)
    if kind.startswith("str") and not isinstance(value, str):
        raise UsageError(f"{name}={value!r}: expected a string, got {type(value).__name__}")
    return value


def set_assignments(overrides: Any) -> tuple[str, ...]:
    """`--set` texts from what `rlsuite.launch(overrides=...)` takes: a mapping of
    `PATH: value` or `PATH=VALUE` texts as on the command line. A value a Python literal
    spells is read back as the command line reads it; any other object (a model config,
    an env class) is applied as itself, with the same type checks."""
    if overrides is None:
        return ()
    if isinstance(overrides, str):
        return (overrides,)
    if isinstance(overrides, Mapping):
        return tuple(_assignment(path, value) for path, value in overrides.items())
    if isinstance(overrides, list | tuple) and all(isinstance(t, str) for t in overrides):
        return tuple(overrides)
    raise UsageError(f"overrides={overrides!r}: expected {{PATH: value}} or ['PATH=VALUE', ...]")


def _assignment(path: Any, value: Any) -> str:
    if not isinstance(path, str):
        raise UsageError(f"overrides: {path!r} is no config path; use 'training.lr' and the like")
    text = f"{path}={value!r}"
    try:
        spelled = ast.literal_eval(repr(value))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return ObjectAssignment(path, value)
    if type(spelled) is type(value) and spelled == value:
        return text
    return ObjectAssignment(path, value)
