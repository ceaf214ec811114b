"""One line from a printed Python traceback: the exception the user needs to read.

Python prints a chain of exceptions from its first: RLlib re-raises an env's error as a
bare `RuntimeError` and an RLModule's as a deprecation `ValueError`, and its env check
wraps a failed reset in a message of many lines, so the last line names the wrapper or a
fragment of it, the first exception the user's own error. Used on a trial's error.txt
(the launcher's summary, `rlsuite.evaluate`'s locate), a dead env runner's log and an
error `rlsuite.evaluate` caught while playing.
"""

from __future__ import annotations

import re
import sysconfig

# An exception line of a printed traceback, with its message or bare (`raise RuntimeError`).
_RAISED = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit)(?:: .+)?$")
_FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+)')
_LIBRARIES = ("site-packages", "dist-packages", sysconfig.get_paths()["stdlib"])


def first_cause(text: str) -> str:
    """The first exception of the chain with where it was raised outside the installed
    libraries, or the text's last line when it holds no traceback."""
    return first_raised(text.splitlines()) or last_line(text)


def first_raised(lines: list[str]) -> str | None:
    """The first exception line, with the last frame before it that is outside the
    installed libraries (the user's env, callback or module): `KeyError: 'x' (at f.py:17)`."""
    for i, line in enumerate(lines):
        if _RAISED.match(line):
            where = _outside_libraries(lines[:i])
            return line.strip() + (f" (at {where})" if where else "")
    return None


def _outside_libraries(traceback: list[str]) -> str | None:
    for line in reversed(traceback):
        frame = _FRAME.match(line)
        if frame and not any(part in frame[1] for part in _LIBRARIES):
            return f"{frame[1]}:{frame[2]}"
    return None


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text
