"""Damaged, missing or foreign checkpoint files: which file, and the trial's last intact
checkpoint.

RLlib, Ray Train and torch read a checkpoint's pickles, JSON and torch files and fail
on a damaged one with whatever error its bytes happen to trigger (UnpicklingError,
EOFError, io.UnsupportedOperation, a torch RuntimeError, ...), naming no file. So when
a restore fails with one of those, the checkpoint's files are read one by one: the
first that is missing or does not load is the damage, reported in one line. When every
file loads, the failure is not the checkpoint's: its traceback stays.
"""

from __future__ import annotations

import contextlib
import io
import json
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from rlsuite.errors import UsageError
from rlsuite.evaluation.locate import (
    CHECKPOINT_MARKER,
    ENV_TO_MODULE_DIR,
    MODULE_TO_ENV_DIR,
    MODULES_DIR,
    checkpoint_dirs,
    checkpoint_index,
    is_checkpoint,
    is_supervised_checkpoint,
)
from rlsuite.supervised.checkpoint import MODEL_FILE, STATE_FILE

CONFIG_FILE = "class_and_ctor_args.pkl"  # RLlib's: a component's class and constructor args
RLLIB_PARTS = (MODULES_DIR, ENV_TO_MODULE_DIR, MODULE_TO_ENV_DIR)
# What reading a damaged file raises, by the loaders of the files' formats.
READ_ERRORS: tuple[type[BaseException], ...] = (
    OSError,  # missing or unreadable; io.UnsupportedOperation from pickle on a stream
    EOFError,  # a pickle cut short
    ValueError,  # bad JSON, bad text encoding, a pickle opcode with a bad argument
    pickle.UnpicklingError,
    RuntimeError,  # torch's zip reader, a state dict that does not fit its model
    ImportError,  # junk that unpickles into names of modules or classes
    AttributeError,
    KeyError,
    IndexError,
    TypeError,
    OverflowError,
    MemoryError,  # a junk length prefix
)
LOADERS: dict[str, Callable[[bytes], Any]] = {
    ".pkl": pickle.loads,
    ".json": json.loads,
    ".pt": lambda data: torch.load(io.BytesIO(data), map_location="cpu"),
}
MESSAGE_CHARS = 120  # of a loader's error message in the one line


class DamagedCheckpointError(UsageError):
    """A checkpoint whose files are damaged, missing or not the suite's; the message names
    the file, `checkpoint` is the directory (to look for an intact one before it)."""

    def __init__(self, message: str, checkpoint: Path) -> None:
        super().__init__(message)
        self.checkpoint = checkpoint


@contextlib.contextmanager
def restoring(checkpoint: Path) -> Iterator[None]:
    """Turn a restore that fails on a damaged or missing file into DamagedCheckpointError."""
    try:
        yield
    except READ_ERRORS:
        damage = find_damage(checkpoint)
        if damage is None:
            raise
        raise DamagedCheckpointError(damage, checkpoint) from None


def check_intact(checkpoint: Path) -> None:
    """Refuse a checkpoint directory that holds neither RLlib's nor the supervised files."""
    if not is_checkpoint(checkpoint):
        raise DamagedCheckpointError(_incomplete(checkpoint), checkpoint)


def find_damage(checkpoint: Path) -> str | None:
    """What is wrong with the files evaluation reads from `checkpoint` (one phrase naming
    the file), or None when every one of them is there and loads."""
    if not is_checkpoint(checkpoint):
        return _incomplete(checkpoint)
    if is_supervised_checkpoint(checkpoint):
        files = [checkpoint / STATE_FILE, checkpoint / MODEL_FILE]
    else:
        missing = _missing_rllib_file(checkpoint)
        if missing is not None:
            return f"{missing} is missing"
        files = [checkpoint / CONFIG_FILE] + [
            file for part in RLLIB_PARTS for file in sorted((checkpoint / part).rglob("*"))
        ]
    for file in files:
        problem = _load_problem(file) if file.is_file() else None
        if problem is not None:
            return f"{file} is damaged ({problem})"
    return None


def earlier_intact(checkpoint: Path) -> Path | None:
    """The newest checkpoint of the same trial before `checkpoint` whose files all load."""
    index = checkpoint_index(checkpoint)
    if index is None:
        return None
    earlier = [p for p in checkpoint_dirs(checkpoint.parent) if (checkpoint_index(p) or 0) < index]
    return next((p for p in reversed(earlier) if find_damage(p) is None), None)


def _missing_rllib_file(checkpoint: Path) -> Path | None:
    """The first file missing from the RLlib components evaluation restores: each
    component directory holds its class (class_and_ctor_args.pkl) and its state."""
    for part in RLLIB_PARTS:
        root = checkpoint / part
        if not root.is_dir():
            return root
        for directory in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
            state = "module_state" if part == MODULES_DIR else "state"
            if not (directory / CONFIG_FILE).is_file():
                return directory / CONFIG_FILE
            if not any((directory / f"{state}{s}").is_file() for s in (".pkl", ".msgpack")):
                return directory / f"{state}.pkl"
    return None


def _load_problem(file: Path) -> str | None:
    loader = LOADERS.get(file.suffix, lambda data: None)
    try:
        loader(file.read_bytes())
    except READ_ERRORS as error:
        message = (str(error).strip().splitlines() or [""])[0][:MESSAGE_CHARS]
        return f"{type(error).__name__}: {message}" if message else type(error).__name__
    return None


def _incomplete(checkpoint: Path) -> str:
    return (
        f"{checkpoint} is incomplete: it holds neither {CHECKPOINT_MARKER} (an RLlib checkpoint) "
        f"nor {STATE_FILE} and {MODEL_FILE} (a supervised one)"
    )
