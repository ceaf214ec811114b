"""A command run on a real pseudo-terminal, as a person runs it in a shell."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import time

import pytest

from tests.helpers import ROOT

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_a_terminal(command: list[str], timeout: float) -> tuple[bytes, int]:
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
