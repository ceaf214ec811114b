"""Ray's output goes to the run's log directory; the terminal keeps the suite's own lines.

Ray, RLlib, Tune and Train write to the driver's stdout and stderr from Python loggers,
`warnings`, `print` and C++ (the core worker's `E` lines), and forward every worker's
output to the driver. Ray's own settings stop what they can: `log_to_driver=False` keeps
worker output in Ray's session logs (copied into the run's log directory at the end).
What the driver process itself writes cannot be told apart by settings alone (Ray prints
raylet messages to whatever `sys.stdout` is when they arrive), so file descriptors 1 and
2 point at `driver.log` while a run lasts, and the suite writes its own lines to
`terminal()`, a copy of the original descriptors.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TextIO

from rlsuite.errors import UsageError

DRIVER_LOG = "driver.log"
RAY_LOGS = "ray"
_terminal: tuple[TextIO, TextIO] | None = None
_held = b""
_pending: tuple[IO[bytes], Path] | None = None


@contextlib.contextmanager
def ray_output_to(logs_dir: Path) -> Iterator[None]:
    """While inside: whatever is written to fd 1 and 2 or to `sys.stdout`/`sys.stderr`
    (Ray's loggers, its raylet messages, C++ lines, stray prints and warnings) lands in
    `logs_dir/driver.log`; the suite writes to the terminal through `terminal()`.

    Until `keep_log()` (called once Ray is up and the cluster checks passed) the output
    waits in a temporary file: a run refused after joining a cluster writes nothing."""
    global _terminal, _pending
    sys.stdout.flush()
    sys.stderr.flush()
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
    log.write(_held)
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    _terminal = (_text(saved[1]), _text(saved[2]))
    _pending = (log, logs_dir)
    for fd in (1, 2):
        os.dup2(log.fileno(), fd)
    try:
        yield
    except (UsageError, KeyboardInterrupt):
        # Bad input, or Ctrl-C while Ray started: nothing written (once Ray is up the log
        # is kept already, and stays).
        raise
    except BaseException:
        keep_log()  # a real failure: its log is worth more than a clean folder
        raise
    else:
        keep_log()
    finally:
        for stream in (sys.stdout, sys.stderr, *_terminal):
            stream.flush()
        _terminal, _pending = None, None
        for fd, original in saved.items():
            os.dup2(original, fd)
            os.close(original)
        log.close()


def keep_log() -> None:
    """From now on the run's output goes to `logs_dir/driver.log`, with what came before."""
    global _pending, _held
    if _pending is None:
        return
    waiting, logs_dir = _pending
    _pending = None
    logs_dir.mkdir(parents=True, exist_ok=True)
    log = open(logs_dir / DRIVER_LOG, "ab", buffering=0)  # noqa: SIM115 (fds keep it open)
    waiting.seek(0)
    shutil.copyfileobj(waiting, log)
    for fd in (1, 2):
        os.dup2(log.fileno(), fd)
    log.close()  # fds 1 and 2 hold the file now
    _held = b""


@contextlib.contextmanager
def held_output() -> Iterator[None]:
    """While the experiment is loaded and checked, before its logs/ may be made (bad input
    writes nothing): fd 1 and 2 go to a temporary file (C libraries print banners there,
    ale-py's "A.L.E: Arcade Learning Environment" among them). The next `ray_output_to`
    puts what was held at the top of its driver.log."""
    global _held
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as buffer:
        saved = {fd: os.dup(fd) for fd in (1, 2)}
        for fd in (1, 2):
            os.dup2(buffer.fileno(), fd)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, original in saved.items():
                os.dup2(original, fd)
                os.close(original)
            buffer.seek(0)
            _held = buffer.read()


def terminal(err: bool = False) -> TextIO:
    """Where the suite's own lines go: the terminal, also while Ray's output is diverted."""
    if _terminal is None:
        return sys.stderr if err else sys.stdout
    return _terminal[1] if err else _terminal[0]


def ray_logs_source() -> Path | None:
    """This process's Ray session log folder, while Ray is up (it is still on disk after
    `ray.shutdown()`, but Ray no longer says where)."""
    try:
        import ray._private.worker as ray_worker

        node = ray_worker._global_node  # private: Ray has no public getter for it
        return Path(node.get_logs_dir_path()) if node is not None else None
    except Exception:
        return None


def copy_ray_logs(logs_dir: Path, source: Path | None = None) -> None:
    """This run's Ray session logs (every worker's output) into `logs_dir/ray`, for a
    local Ray; on a cluster they stay on each node (`ray logs`). `source`, taken with
    `ray_logs_source()` before Ray was shut down, copies what the workers wrote up to their
    end; without it, the session of the Ray that is up."""
    source = source if source is not None else ray_logs_source()
    if source is None or not source.is_dir() or not logs_dir.is_dir():
        return  # no Ray, or the run was refused before it kept a log
    with contextlib.suppress(OSError):
        shutil.copytree(source, logs_dir / RAY_LOGS, dirs_exist_ok=True)


def _text(fd: int) -> TextIO:
    # isatty() answers for the terminal, so the live view still knows it has one.
    return io.TextIOWrapper(
        os.fdopen(fd, "wb", closefd=False), encoding="utf-8", line_buffering=True
    )
