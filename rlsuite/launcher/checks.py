"""Checks of a prepared experiment that hold for every workload, before Ray starts."""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from rlsuite import metrics, outputs
from rlsuite.errors import UsageError
from rlsuite.experiment import PB2, PBT, Experiment
from rlsuite.flags import MAX_SEED, parse_assignment
from rlsuite.launcher import run_dirs

KNOWN_NAMES = [*metrics.BY_NAME, *metrics.STOP_KEYS]
"""Metric names a stop or a ranking metric may take, for suggestions."""


def check_checkpoint_cadence(experiment: Experiment) -> None:
    """Under PBT an exploit copies the top trial's latest checkpoint: checkpoints must fall
    on every perturbation, or exploits copy stale weights."""
    scheduler = experiment.scheduler
    if (
        isinstance(scheduler, PBT | PB2)
        and scheduler.perturbation_interval % experiment.checkpoint_every
    ):
        raise UsageError(
            f"PBT perturbs every {scheduler.perturbation_interval} iterations but checkpoints every "
            f"{experiment.checkpoint_every}; set --checkpoint-every to {scheduler.perturbation_interval} or a divisor of it"
        )


# A local run may reserve up to this many times the machine's CPUs: a PPO trial with two
# env runners (3 CPUs) runs fine on 2 cores, idle actors wait on each other's work. Far
# beyond it, dozens of actor processes exhaust memory and the run never gets going.
LOCAL_OVERSUBSCRIPTION = 2


def check_fits_locally(needed: Mapping[str, float], cpus: int, flags: str) -> None:
    """A trial of a local run must fit this machine (GPUs are checked by the workload);
    `flags`: the workload's that size a trial."""
    wanted = needed.get("CPU", 0.0)
    if wanted > LOCAL_OVERSUBSCRIPTION * cpus:
        raise UsageError(
            f"one trial needs {wanted:g} CPUs but this machine has {cpus} (a local run may "
            f"reserve up to {LOCAL_OVERSUBSCRIPTION * cpus}); lower {flags}, or join a "
            "cluster with --address"
        )


def check_stop(stop: Mapping[str, float]) -> None:
    if not stop:
        raise UsageError(
            "no stop criteria: give the experiment a `stop` or pass --stop METRIC=VALUE"
        )
    for key, value in stop.items():
        if metrics.resolve(key) is None:
            raise UsageError(f"unknown stop metric '{key}'; {_suggest(key)}")
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise UsageError(f"stop value of '{key}' must be a number, got {value!r}")
        if not math.isfinite(value):  # as --stop refuses it: a trial that never stops
            raise UsageError(f"stop value of '{key}' must be a finite number, got {value!r}")


def check_metric(metric: str) -> None:
    """A metric that ranks trials and is one letter or two off a known one (a typo): Tune
    only warns about a key no result has, and the run would pick its best trial by nothing.
    Other unknown names pass, as metrics the experiment's own callbacks may log."""
    if metrics.resolve(metric) is not None:
        return
    close = difflib.get_close_matches(metric, KNOWN_NAMES, 1, 0.85)
    if close:
        raise UsageError(f"Experiment(metric={metric!r}): unknown metric; {_suggest(metric)}")


def stops_with_budget(texts: list[str], file_stop: Mapping[str, float]) -> Mapping[str, float]:
    """`--stop` flags replace the file's stop; flags that name only targets (a return, a
    win rate) keep the file's budget (env steps, iterations, time, epochs) beside them,
    so that a target the run never reaches does not keep it training without an end."""
    stop = parse_stops(texts)
    if not stop:
        return file_stop
    if not metrics.BUDGET_KEYS.intersection(stop):
        stop = {**{k: v for k, v in file_stop.items() if k in metrics.BUDGET_KEYS}, **stop}
    return stop


def parse_stops(texts: list[str]) -> dict[str, float]:
    """`--stop METRIC=VALUE` flags as full result keys."""
    stop: dict[str, float] = {}
    for text in texts:
        name, sep, raw = text.partition("=")
        if not sep:
            raise UsageError(
                f"--stop {text!r}: expected METRIC=VALUE, e.g. --stop training_iteration=20"
            )
        key = metrics.resolve(name.strip())
        if key is None:
            raise UsageError(f"--stop {name}: unknown metric; {_suggest(name.strip())}")
        try:
            stop[key] = float(raw)
        except ValueError:
            raise UsageError(f"--stop {name}: expected a number, got {raw!r}") from None
        if not math.isfinite(stop[key]):  # a trial that never stops
            raise UsageError(f"--stop {name}: expected a finite number, got {raw!r}")
    return stop


def check_sets_not_searched(
    sets: Iterable[str], search: Mapping[str, Any], param_keys: Callable[[str], tuple[str, ...]]
) -> None:
    """A `--set` of a searched key would be replaced in every trial by the search's value
    (Tune's param space lays the search over the config), so the edit would not happen.
    Call once the paths are known good (the workload applied them); `param_keys` is the
    workload's, the param-space keys a path writes."""
    for text in sets:
        path, _ = parse_assignment(text)
        for key in param_keys(path):
            if key in search:
                source = "--seeds" if key == "seed" else "the experiment's search"
                fix = f"or change {source}"
                if key != "seed":  # the file's own values are one flag away
                    fix = f"change {source}, or run the file's own values with --no-search"
                raise UsageError(
                    f"--set {path}: {source} sets '{key}' in every trial, so this edit "
                    f"would not happen; drop the --set, {fix}"
                )


def check_run_name(name: str) -> None:
    """`--name` is one folder under the storage path: a path in it would put the results
    outside the storage path that was checked (`--name /tmp/x`, `--name ../x`)."""
    if not name.strip() or name in (".", "..") or "/" in name or not name.isprintable():
        raise UsageError(
            f"--name {name!r}: a results folder name, not a path; choose where results go with --storage-path"
        )
    size = len(os.fsencode(name))
    if size > run_dirs.MAX_NAME_BYTES:  # else an OSError where the folder is made or moved
        raise UsageError(
            f"--name {name[:20]}...: {size} bytes long, and a results folder name takes at "
            f"most {run_dirs.MAX_NAME_BYTES} (file systems take {run_dirs.NAME_MAX}, less "
            "what --overwrite adds to move a run aside); choose a shorter --name"
        )


def check_seeds(seed: int | None, seeds: int | None) -> None:
    """The last of the run's seeds fits numpy's range."""
    last = (seed or 0) + (seeds or 1) - 1
    if last > MAX_SEED:
        flags = f"--seed {seed or 0}" + (f" --seeds {seeds}" if seeds else "")
        raise UsageError(f"{flags}: seeds go up to {MAX_SEED:,}; choose a smaller --seed")


def check_storage_is_a_path(storage_path: str) -> None:
    """A file system path: the suite writes the run's lock, logs and summary with file
    operations, so an object-store URI (`s3://`) would have become a local folder named
    `s3:` under the working directory, out of the other nodes' reach."""
    if not storage_path.strip():  # else the results would land in the working directory
        raise UsageError(
            "--storage-path '': give the directory the results go to (default: ./results)"
        )
    if re.match(r"[A-Za-z][\w+.-]+:/", storage_path):  # s3://, or s3:/ as a Path prints it
        raise UsageError(
            f"--storage-path {storage_path}: object-store URIs are not supported yet; give a "
            "directory every node mounts at the same path (NFS, EFS, Lustre, a Filestore "
            "or other ReadWriteMany volume), or a local one on a single machine"
        )


def check_storage(path: Path) -> None:
    """`path` must be a writable directory or creatable inside one (nothing is created here)."""
    outputs.check_output_dir(path, "--storage-path")


def return_threshold(stop: Mapping[str, float]) -> tuple[str, float] | None:
    for key in metrics.RETURN_METRICS:
        if key in stop:
            return key, stop[key]
    return None


def _suggest(name: str) -> str:
    if name in metrics.OLD_API_STACK_NAMES:
        return (
            "that is RLlib's old API stack name, which the new stack does not report; use "
            f"{metrics.OLD_API_STACK_NAMES[name]}"
        )
    close = difflib.get_close_matches(name, KNOWN_NAMES, n=2, cutoff=0.5)
    if close:
        return f"did you mean {' or '.join(close)}?"
    return f"use one of {', '.join(metrics.BY_NAME)}"
