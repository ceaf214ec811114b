"""What `--resume` checks before Ray starts: Tune's saved state reads back, and the command
asks for the run Tune will restore. `Tuner.restore` brings back each trial with the config
it started with and the run with its own settings (resume_settings.py; it compares only
the keys of a re-given param space), so a changed experiment file, `--set` or flag given
with `--resume` would be dropped without a word: refused here, naming what differs."""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from ray.tune.utils import flatten_dict
from ray.tune.utils.util import SafeFallbackEncoder

from rlsuite.errors import UsageError
from rlsuite.launcher.resume_settings import FRESH, RunSettings, check_same_settings
from rlsuite.launcher.run_dirs import STATE_GLOB
from rlsuite.results import ADDRESS

SHOWN = 3
"""Differences named in the line; the rest are counted."""

__all__ = ["RunSettings", "check_resumable", "check_same_config"]


def check_resumable(experiment_dir: Path, settings: RunSettings | None = None) -> None:
    """Tune can restore the run: its state files exist and read back, and (`settings`)
    its settings (resume_settings.py) are the ones asked for now."""
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
            saved = pickle.load(file)
    except Exception as error:  # any unpickling failure means the file is damaged
        raise UsageError(
            f"--resume: {tuner_file} is damaged ({type(error).__name__}); {fresh}"
        ) from None
    if settings is not None:
        check_same_settings(experiment_dir, saved, settings)
    newest = max(states, key=lambda p: p.name)  # Tune's pick: the latest timestamp in the name
    try:
        state = json.loads(newest.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(
            f"--resume: {newest} is damaged ({type(error).__name__}); {fresh}"
        ) from None
    _check_checkpoints_there(experiment_dir, state)


def _check_checkpoints_there(experiment_dir: Path, state: Any) -> None:
    """Every trial Tune would continue has its latest checkpoint folder: Tune restores a
    trial from that one only, and a deleted one failed the trial after Ray started. Read
    with Tune's own Trial (no Ray needed); a state it cannot read is left to Tune."""
    from ray.tune.experiment.trial import Trial

    try:
        trials = []
        for trial_state, run_metadata in state["trial_data"]:
            trial = Trial.from_json_state(trial_state, stub=True)
            trial.restore_run_metadata(run_metadata)
            trials.append(trial)
    except Exception:  # another Tune version's layout
        return
    for trial in trials:
        if trial.status == Trial.TERMINATED or trial.checkpoint is None:
            continue
        saved = Path(trial.checkpoint.path)
        here = experiment_dir / saved.parent.name / saved.name  # the run may have moved
        if not here.is_dir() or not any(here.iterdir()):
            raise UsageError(
                f"--resume {experiment_dir}: trial {trial.trial_id}'s latest checkpoint "
                f"{here} is gone, and Tune resumes a trial from its latest one only; put it "
                f"back, or {FRESH}"
            )


def check_same_config(
    experiment_dir: Path, param_space: Mapping[str, Any], varied: Iterable[str]
) -> None:
    """Each trial's saved config (its params.json) holds the values the command gives now,
    except under the `varied` top-level keys (the search and what PBT perturbs), which
    differ from trial to trial by design. Trials that had not started hold no params.json
    and are not compared."""
    now = _written(param_space)
    skipped = tuple(varied)
    for params in sorted(experiment_dir.glob("*/params.json")):
        try:
            there = _flat(json.loads(params.read_text()))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # a trial that wrote no config: nothing to compare
        differ = [
            line
            for key, line in [
                *((key, _difference(key, there, now)) for key in _keys_to_compare(there, now)),
                *_filled(there, now),
            ]
            if line and key.split("/", 1)[0] not in skipped
        ]
        if differ:
            more = f" and {len(differ) - SHOWN} more" if len(differ) > SHOWN else ""
            raise UsageError(
                f"--resume {experiment_dir}: the experiment now sets {'; '.join(differ[:SHOWN])}"
                f"{more}, and Tune resumes each trial with the config it started with; resume "
                f"with the file and flags that started it, or {FRESH}"
            )


_UNSTABLE = "\x00 not compared"


class _Constants(SafeFallbackEncoder):
    """Tune's encoder for params.json, except that what it writes as `str(object)` is
    marked and left out: a set's items come in hash order, and a function's or an
    object's repr can read differently in every process."""

    def default(self, value: Any) -> Any:
        if isinstance(value, type):
            return str(value)  # a class reads the same in every process
        if dataclasses.is_dataclass(value) and not ADDRESS.search(str(value)):
            # As Tune writes it (its repr): a DefaultModelConfig of numbers and lists reads
            # the same in every process, one holding a function does not.
            return str(value)
        if isinstance(value, np.ndarray | np.generic):
            return super().default(value)
        return _UNSTABLE


def _written(param_space: Mapping[str, Any]) -> dict[str, Any]:
    """The space's leaves as Tune writes them into params.json, unstable ones marked."""
    return _flat(json.loads(json.dumps(dict(param_space), cls=_Constants)))


def _flat(config: dict[str, Any]) -> dict[str, Any]:
    """`flatten_dict`'s leaves, and each empty dict as a leaf of its own (flattening drops
    them, and with them a key given later under an `env_config` that was empty)."""
    flat = dict(flatten_dict(config))
    flat.update((key, {}) for key in _empty_dicts(config, ""))
    return flat


def _empty_dicts(config: Mapping[str, Any], prefix: str) -> list[str]:
    found = []
    for key, value in config.items():
        if isinstance(value, Mapping):
            path = f"{prefix}{key}"
            found.extend(_empty_dicts(value, f"{path}/") if value else [path])
    return found


def _filled(there: dict[str, Any], now: dict[str, Any]) -> list[tuple[str, str | None]]:
    """A leaf on one side that holds entries on the other: an `env_config` empty (or None)
    when the run started, given keys now, or the reverse."""
    lines = []
    for one, other, side in ((there, now, "there"), (now, there, "now")):
        for key in sorted({prefix for name in other for prefix in _prefixes(name)} & set(one)):
            if f"{key}/grid_search" in other:  # a search written in place: varied by design
                continue
            shown = f"{_shown(one[key])} {side}"
            entries = "entries " + ("now" if side == "there" else "there")
            lines.append((key, f"{key} ({shown}, {entries})" if _stable(one[key]) else None))
    return lines


def _keys_to_compare(there: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Keys in both, and keys added or removed inside a dict both have (an `env_config`
    entry): RLlib's own keys are the same on both sides."""
    parents = _parents(there) & _parents(now)
    # A value that became a dict (a `grid_search` written inside env_config) is no removal.
    now_dicts = {prefix for key in now for prefix in _prefixes(key)}
    return [
        *(key for key in now if key in there or key.rpartition("/")[0] in parents - {""}),
        *(
            key
            for key in there
            if key not in now and key.rpartition("/")[0] in parents - {""} and key not in now_dicts
        ),
    ]


def _prefixes(key: str) -> list[str]:
    parts = key.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _parents(flat: dict[str, Any]) -> set[str]:
    """The non-empty dicts a flattened config holds (empty ones are leaves: `_flat`)."""
    return {key.rpartition("/")[0] for key in flat}


def _difference(key: str, there: dict[str, Any], now: dict[str, Any]) -> str | None:
    was, value = there.get(key, _ABSENT), now.get(key, _ABSENT)
    if not (_stable(was) and _stable(value)) or _same(was, value):
        return None
    return f"{key} ({_shown(was)} there, {_shown(value)} now)"


_ABSENT = "\x00 absent"


def _same(was: Any, value: Any) -> bool:
    if isinstance(was, float) and isinstance(value, float):
        return was == value or (math.isnan(was) and math.isnan(value))
    if isinstance(was, str) and isinstance(value, str) and was[:1] == value[:1] == "/":
        # Absolute paths made from a relative one where the command ran (a supervised
        # data_path): resumed from another directory, the same data reads another path.
        return Path(was).name == Path(value).name
    return bool(was == value)


def _stable(value: Any) -> bool:
    """JSON constants that read the same in every process."""
    if value is _ABSENT:
        return True
    if isinstance(value, list):
        return all(_stable(item) for item in value)
    if isinstance(value, str):
        return value != _UNSTABLE
    if isinstance(value, dict):
        return not value  # an empty dict (`_flat`); others are flattened
    return value is None or isinstance(value, bool | int | float)


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "absent"
    text = f"{value:g}" if isinstance(value, float) else json.dumps(value)
    return text if len(text) <= 60 else f"{text[:57]}..."
