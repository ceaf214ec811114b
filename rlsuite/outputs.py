"""Paths a command will write (a video, an export directory, a report), checked before
anything runs or is written, so that a bad one is one line and exit code 2.

Permission bits say nothing for root, nor for read-only or virtual file systems such as
/proc, so a directory's writability is found by making a folder in it and removing it
(as `rlsuite.launcher.checks.check_storage` does for the storage path).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from rlsuite.errors import UsageError


def check_output_dir(path: Path, flag: str) -> None:
    """`path` is a writable directory, or one that can be made (nothing is made here)."""
    where = f"{flag} {path}"
    existing = _nearest_existing(path, where)
    if existing == path and not path.is_dir():
        raise UsageError(f"{where}: it is a file, not a directory; give a directory")
    _check_writable_dir(existing, where)


def check_output_file(path: Path, flag: str) -> None:
    """`path` is a writable file, or one that can be made (nothing is made here)."""
    where = f"{flag} {path}"
    existing = _nearest_existing(path, where)
    if path.is_dir():
        raise UsageError(f"{where}: it is a directory; give a file name")
    if existing != path:
        _check_writable_dir(existing, where)
        return
    try:
        with path.open("ab"):  # opened for writing, not truncated, nothing written
            pass
    except OSError as error:
        raise UsageError(f"{where}: cannot be written ({error.strerror})") from None


def _nearest_existing(path: Path, where: str) -> Path:
    """`path` or its nearest ancestor that exists. A path the OS would refuse to make (a
    folder name longer than its file system takes, a path past PATH_MAX) is refused
    here, not with a traceback where it is made."""
    existing = path
    while not _exists(existing, where) and existing.parent != existing:
        existing = existing.parent
    try:
        name_max = os.pathconf(existing, "PC_NAME_MAX")
        path_max = os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError):  # no such limits on this OS or file system
        return existing
    for name in path.relative_to(existing).parts:
        if len(os.fsencode(name)) > name_max:
            raise UsageError(
                f"{where}: the name {name[:20]}... is {len(os.fsencode(name))} bytes long, "
                f"and the file system of {existing} takes at most {name_max}; pick a shorter one"
            )
    if len(os.fsencode(path.absolute())) >= path_max:
        raise UsageError(
            f"{where}: longer than the {path_max} bytes a path may have; pick a shorter one"
        )
    return existing


def _exists(path: Path, where: str) -> bool:
    try:
        return path.exists()
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            return False  # one of its names: named by _nearest_existing
        raise UsageError(f"{where}: {error.strerror}; pick another path") from None


def _check_writable_dir(existing: Path, where: str) -> None:
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
