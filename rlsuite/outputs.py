"""Paths a command will write (a video, an export directory, a report), checked before
anything runs or is written, so that a bad one is one line and exit code 2.

Permission bits say nothing for root, nor for read-only or virtual file systems such as
/proc, so a directory's writability is found by making a folder in it and removing it
(as `rlsuite.launcher.checks.check_storage` does for the storage path).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from rlsuite.errors import UsageError


def check_output_dir(path: Path, flag: str) -> None:
    """`path` is a writable directory, or one that can be made (nothing is made here)."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: it is a file, not a directory; give a directory")
    _check_creatable(path, flag)


def check_output_file(path: Path, flag: str) -> None:
    """`path` is a writable file, or one that can be made (nothing is made here)."""
    if path.is_dir():
        raise UsageError(f"{flag} {path}: it is a directory; give a file name")
    if not path.exists():
        _check_creatable(path.parent, flag, path)
        return
    try:
        with path.open("ab"):  # opened for writing, not truncated, nothing written
            pass
    except OSError as error:
        raise UsageError(f"{flag} {path}: cannot be written ({error.strerror})") from None


def _check_creatable(directory: Path, flag: str, given: Path | None = None) -> None:
    existing = directory
    while not existing.exists():
        existing = existing.parent
    where = f"{flag} {given or directory}"
    if not existing.is_dir():
        raise UsageError(f"{where}: {existing} is a file, not a directory; pick another path")
    if not _writable(existing):
        raise UsageError(f"{where}: {existing} is not writable; pick another path")


def _writable(directory: Path) -> bool:
    try:
        probe = tempfile.mkdtemp(prefix=".rlsuite-write-check-", dir=directory)
    except OSError:
        return False
    os.rmdir(probe)
    return True
