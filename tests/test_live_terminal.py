"""The live view on a real pseudo-terminal: a short run shows a moving bar with ETA and ends
with the plain summary lines (tests/test_live_progress.py feeds the view results directly).
The run replaces a finished one with `--overwrite` too (test_run_safety.py's other checks)."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT, digest

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def test_a_run_on_a_terminal_shows_a_bar_and_ends_with_the_plain_summary(
    cartpole_run: Path, tmp_path: Path
) -> None:
    """The run also replaces a finished run of the same name with `--overwrite`, which
    keeps the old one aside byte for byte (one run for both, CI time)."""
    shutil.copytree(cartpole_run, tmp_path / "cartpole")
    before = digest(tmp_path / "cartpole")
    command = [
        sys.executable,
        *("-m", "rlsuite.run", "experiments/ppo_cartpole.py", "--smoke"),
        *("--storage-path", str(tmp_path), "--stop", "training_iteration=4"),
        *("--name", "cartpole", "--overwrite"),
    ]
    output, status = _run_on_a_terminal(command, timeout=120)
    text = ANSI.sub(b"", output).decode()
    assert os.waitstatus_to_exitcode(status) == 0, text[-3000:]
    (aside,) = tmp_path.glob("cartpole.replaced-*")
    assert digest(aside) == before
    assert (tmp_path / "cartpole" / "summary.json").exists()
    assert "ETA" in text and "/4 iter" in text and "elapsed" in text
    assert "━" in text
    _, view_end, summary = output.rpartition(b"\x1b[?25h")  # the view ends: cursor shown
    assert view_end
    # Plain lines after it, and no colour reset at exit (Ray's colorama: rlsuite.flags.exit_with).
    lines = [line for line in summary.split(b"\r\n") if line.strip()]
    assert not [line for line in lines if b"\x1b" in line], lines
    plain = [line.decode() for line in lines]
    assert re.match(r"PPO_\w+ OK: return ", plain[0]), plain
    assert plain[-1].startswith("results: ")


def test_evaluate_on_a_terminal_prints_plain_lines(cartpole_run: Path) -> None:
    command = [sys.executable, "-m", "rlsuite.evaluate", str(cartpole_run), "--episodes", "2"]
    output, status = _run_on_a_terminal(command, timeout=120)
    assert os.waitstatus_to_exitcode(status) == 0, output.decode()[-3000:]
    assert b"return mean" in output
    assert b"\x1b" not in output, output[-500:]


def _run_on_a_terminal(command: list[str], timeout: float) -> tuple[bytes, int]:
    """Run `command` with a pseudo-terminal (100x30) as its stdin, stdout and stderr."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its terminal's size, then the command
        import fcntl
        import struct
        import termios

        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        os.chdir(ROOT)
        os.execve(command[0], command, {**os.environ, "TERM": "xterm-256color"})
    output = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            output += data
        else:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"no exit within {timeout} s:\n{ANSI.sub(b'', output).decode()[-3000:]}")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return output, status
