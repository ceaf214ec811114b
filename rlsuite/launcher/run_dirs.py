"""One run per results folder: a second run never writes into the first one's files.

A folder that already holds a run is refused before Ray starts, with the three ways on:
`--resume` (continue it), `--name` (a new folder), `--overwrite` (move the old run aside
to NAME.replaced-TIME, keeping it, and start afresh). Sample Factory makes the same
choice explicit (`--restart_behavior`); numbered folders (rl-baselines3-zoo's `PPO_1`,
`PPO_2`) would leave `--resume` and `rlsuite.evaluate results/NAME` unsure which run
they mean (what `--resume` checks first is in resume_checks.py). A run holds its folder (`claimed`) from before Ray starts
to its end, so that a second one started at the same moment, before the first has
written any of Tune's files, is refused too, and `--resume` or `--overwrite` of a run
still going.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rlsuite.errors import UsageError

# What Tune and the suite write at the top of a run's folder.
RUN_FILES = ("tuner.pkl", "summary.json")
STATE_GLOB = "experiment_state-*.json"
LOCK_FILE = ".rlsuite-run.lock"
"""Held with flock while a run goes: the OS releases it when the process ends, however."""


def holds_run(experiment_dir: Path) -> bool:
    if not experiment_dir.is_dir():
        return False
    return any((experiment_dir / f).exists() for f in RUN_FILES) or any(
        experiment_dir.glob(STATE_GLOB)
    )


def check_new_run(experiment_dir: Path, overwrite: bool) -> None:
    if experiment_dir.exists() and not experiment_dir.is_dir():
        raise UsageError(
            f"{experiment_dir} is a file, not a results folder; pick another --name or --storage-path"
        )
    if holds_run(experiment_dir) and not overwrite:
        raise UsageError(
            f"{experiment_dir} already holds a run; continue it with --resume, start another "
            f"with --name NEW_NAME, or pass --overwrite to move it aside (to "
            f"{experiment_dir.name}.replaced-TIME) and start afresh"
        )


def move_aside(experiment_dir: Path) -> Path | None:
    """Move a run's folder to NAME.replaced-TIME next to it (for `--overwrite`)."""
    if not holds_run(experiment_dir):
        return None
    target = experiment_dir.with_name(aside_name(experiment_dir.name, datetime.datetime.now()))
    experiment_dir.rename(target)
    return target


def aside_name(name: str, when: datetime.datetime) -> str:
    return f"{name}.replaced-{when:%Y%m%d-%H%M%S}"


NAME_MAX = 255
"""Bytes in one folder name on the common file systems (ext4, XFS, Btrfs, APFS, NTFS)."""
MAX_NAME_BYTES = NAME_MAX - len(aside_name("", datetime.datetime(2000, 1, 1)))
"""The longest run folder name `--overwrite` can still move aside."""


class InterruptedBeforeStart(KeyboardInterrupt):
    """Ctrl-C before Tune wrote the run's state: the claim was undone, nothing to resume;
    its message says where a run --overwrite moved aside stayed, if it could not go back."""


@contextlib.contextmanager
def claimed(experiment_dir: Path, overwrite: bool) -> Iterator[None]:
    """The folder is this run's until the block ends; with `overwrite`, the run it held is
    moved aside first, unless that run is still going."""
    aside = _moved_aside(experiment_dir) if overwrite else None
    created = [d for d in (experiment_dir, *experiment_dir.parents) if not d.exists()]
    with _locked(experiment_dir):
        try:
            yield
        except (UsageError, KeyboardInterrupt) as error:
            # Refused once Ray joined a cluster (its resources), or Ctrl-C before Tune
            # wrote the run's state (while Ray started): nothing to resume, so the claim
            # is undone. Undone while the lock is still held, so that no other run takes
            # the folder between the removal of this one's and the old run's return.
            if isinstance(error, KeyboardInterrupt) and holds_run(experiment_dir):
                raise  # Tune's state is there: --resume continues the run
            if created:
                (experiment_dir / LOCK_FILE).unlink(missing_ok=True)
                for folder in created:  # deepest first
                    with contextlib.suppress(OSError):  # not empty: another process's files
                        folder.rmdir()
            stayed = _put_back(aside, experiment_dir) if aside is not None else None
            if isinstance(error, KeyboardInterrupt):
                raise InterruptedBeforeStart(stayed or "") from None
            if stayed:
                raise UsageError(f"{error}; {stayed}") from None
            raise


def _moved_aside(experiment_dir: Path) -> Path | None:
    """A run without a lock file (a plain Tune run, one from before the lock, a copy made
    without dotfiles) is moved aside too: `check_new_run` refused it without
    `--overwrite`, so with it, it must not stay under the new run's files."""
    if not holds_run(experiment_dir):
        return None
    if not (experiment_dir / LOCK_FILE).is_file():
        return move_aside(experiment_dir)
    with (experiment_dir / LOCK_FILE).open() as file:  # read only: the run moved aside
        _lock(file, experiment_dir)  # stays byte for byte as it was
        # Held through the move: a `--resume` of the old run that took the lock between
        # the two would go on in a folder renamed under it.
        return move_aside(experiment_dir)


def _put_back(aside: Path, experiment_dir: Path) -> str | None:
    """Bad input writes nothing and loses nothing (exit 2), and `--resume` looks for the
    run under its own name: the old run goes back where it was rather than staying at
    NAME.replaced-TIME. Where the refused run left files of its own there (its logs,
    once Ray was up), those files are not this function's to delete: the old run stays
    aside, and the line says where (the text returned)."""
    try:
        aside.rename(experiment_dir)  # fails unless the folder is gone or empty
    except OSError:
        return f"the run --overwrite moved aside is at {aside}"
    return None


@contextlib.contextmanager
def _locked(experiment_dir: Path) -> Iterator[None]:
    experiment_dir.mkdir(parents=True, exist_ok=True)
    with (experiment_dir / LOCK_FILE).open("a+") as file:
        _lock(file, experiment_dir)
        file.seek(0)
        file.truncate()
        file.write(f"{os.getpid()}\n")
        file.flush()
        yield


def _lock(file: IO[str], experiment_dir: Path) -> None:
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        file.seek(0)
        holder = file.read().strip() or "unknown"
        raise UsageError(
            f"{experiment_dir} is in use by a run still going (pid {holder}); wait for it "
            "to end, or start this one with another --name"
        ) from None
