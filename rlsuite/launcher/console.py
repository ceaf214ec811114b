"""Ray's output goes to the run's log directory; the terminal keeps the suite's own lines.

Ray, RLlib, Tune and Train write to the driver's stdout and stderr from Python loggers,
`warnings`, `print` and C++ (the core worker's `E` lines), and forward every worker's
output to the driver. Ray's own settings stop what they can: `log_to_driver=False` keeps
worker output in Ray's session logs (copied into the run's log directory at the end).
What the driver process itself writes cannot be told apart by settings alone, so the
file descriptors 1 and 2 point at `driver.log` while a run lasts, and the suite writes
to the terminal through `sys.stdout`/`sys.stderr`, which keep the original ones.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

DRIVER_LOG = "driver.log"
RAY_LOGS = "ray"


@contextlib.contextmanager
def ray_output_to(logs_dir: Path) -> Iterator[None]:
    """While inside: whatever is written to fd 1 and 2 (Ray's loggers, C++ lines, stray
    prints and warnings) lands in `logs_dir/driver.log`; `sys.stdout`/`sys.stderr` still
    reach the terminal for the suite's own lines."""
    logs_dir.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    log = open(logs_dir / DRIVER_LOG, "ab", buffering=0)  # noqa: SIM115 (closed below)
    terminal = {fd: os.dup(fd) for fd in (1, 2)}
    streams = (sys.stdout, sys.stderr)
    sys.stdout = _text(terminal[1])
    sys.stderr = _text(terminal[2])
    for fd in (1, 2):
        os.dup2(log.fileno(), fd)
    show_warning = warnings.showwarning
    _send_warnings_to(log)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        for fd, saved in terminal.items():
            os.dup2(saved, fd)
            os.close(saved)
        sys.stdout, sys.stderr = streams
        warnings.showwarning = show_warning
        log.close()


def copy_ray_logs(logs_dir: Path) -> None:
    """This run's Ray session logs (every worker's output) into `logs_dir/ray`, for a
    local Ray; on a cluster they stay on each node (`ray logs`)."""
    try:
        import ray._private.worker as ray_worker

        node = ray_worker._global_node  # private: Ray has no public getter for it
        source = Path(node.get_logs_dir_path()) if node is not None else None
    except Exception:
        return
    if source is None or not source.is_dir():
        return
    with contextlib.suppress(OSError):
        shutil.copytree(source, logs_dir / RAY_LOGS, dirs_exist_ok=True)


def _text(fd: int) -> TextIO:
    return io.TextIOWrapper(
        os.fdopen(fd, "wb", closefd=False), encoding="utf-8", line_buffering=True
    )


def _send_warnings_to(log: io.FileIO) -> None:
    # `warnings` writes to sys.stderr, which now means the terminal: the driver's
    # DeprecationWarnings and UserWarnings raised inside Ray go to the log instead.
    def show(message, category, filename, lineno, file=None, line=None):
        text = warnings.formatwarning(message, category, filename, lineno, line)
        with contextlib.suppress(OSError, ValueError):
            log.write(text.encode("utf-8", "replace"))

    warnings.showwarning = show
