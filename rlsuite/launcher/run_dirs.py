"""One run per results folder: a second run never writes into the first one's files.

A folder that already holds a run is refused before Ray starts, with the three ways on:
`--resume` (continue it), `--name` (a new folder), `--overwrite` (move the old run aside
to NAME.replaced-TIME, keeping it, and start afresh). Sample Factory makes the same
choice explicit (`--restart_behavior`); numbered folders (rl-baselines3-zoo's `PPO_1`,
`PPO_2`) would leave `--resume` and `rlsuite.evaluate results/NAME` unsure which run
they mean. `--resume` checks Tune's saved state first, so a damaged file is named in
one line instead of a traceback.
"""

from __future__ import annotations

import datetime
import json
import pickle
from pathlib import Path

from rlsuite.errors import UsageError

# What Tune and the suite write at the top of a run's folder.
RUN_FILES = ("tuner.pkl", "summary.json")
STATE_GLOB = "experiment_state-*.json"


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
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    target = experiment_dir.with_name(f"{experiment_dir.name}.replaced-{stamp}")
    experiment_dir.rename(target)
    return target


def check_resumable(experiment_dir: Path) -> None:
    """Tune can restore the run: its state files exist and read back."""
    tuner_file = experiment_dir / "tuner.pkl"
    states = sorted(experiment_dir.glob(STATE_GLOB)) if experiment_dir.is_dir() else []
    if not tuner_file.is_file() or not states:
        raise UsageError(
            f"--resume: nothing to resume at {experiment_dir}; run without --resume first "
            "(or pass the --name and --storage-path of the interrupted run)"
        )
    fresh = "start afresh with --overwrite (the damaged run is moved aside) or a new --name"
    try:
        with tuner_file.open("rb") as file:
            pickle.load(file)
    except Exception as error:  # any unpickling failure means the file is damaged
        raise UsageError(
            f"--resume: {tuner_file} is damaged ({type(error).__name__}); {fresh}"
        ) from None
    newest = max(states, key=lambda p: p.stat().st_mtime)
    try:
        json.loads(newest.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(
            f"--resume: {newest} is damaged ({type(error).__name__}); {fresh}"
        ) from None
