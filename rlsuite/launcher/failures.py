"""The message a user needs when a trial fails, found where Ray left it.

RLlib ends an env runner whose env raised with `sys.exit(1)`, so the trial only sees
`ActorDiedError` ("the actor died unexpectedly"); the env's own exception is in that
runner's log. Ray's state API reads the log from whichever node the runner ran on.
"""

from __future__ import annotations

import re
import sysconfig
import time

_RUNNER = re.compile(
    r"class_name: (\w*EnvRunner)\s+actor_id: \w+\s+pid: (\d+)(?:\s+namespace: \S+)?\s+ip: ([\d.]+)"
)
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit): .+")
# An exception line of a printed traceback, with its message or bare (`raise RuntimeError`).
_RAISED = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit)(?:: .+)?$")
_FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+)')
_LIBRARIES = ("site-packages", "dist-packages", sysconfig.get_paths()["stdlib"])


def explain(error_text: str) -> str:
    """One line: the env runner's own exception when a runner died, else the exception the
    error's traceback starts from, with the last place outside the installed libraries it
    passed through (the user's env, callback or module, where they raised)."""
    match = _RUNNER.search(error_text)
    if match:
        runner, pid, ip = match.groups()
        cause = _runner_exception(int(pid), ip)
        if cause:
            return f"{runner} (pid {pid}) failed: {cause}"
    return first_cause(error_text)


def first_cause(text: str) -> str:
    """Python prints a chain of exceptions from its first: RLlib re-raises an env's error
    as a bare `RuntimeError` and an RLModule's as a deprecation `ValueError`, and its env
    check wraps a failed reset in a message of many lines, so the last line names the
    wrapper or a fragment of it, the first exception the user's own error."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _RAISED.match(line):
            where = _outside_libraries(lines[:i])
            return line.strip() + (f" (at {where})" if where else "")
    return last_line(text)


def _outside_libraries(traceback: list[str]) -> str | None:
    for line in reversed(traceback):
        frame = _FRAME.match(line)
        if frame and not any(part in frame[1] for part in _LIBRARIES):
            return f"{frame[1]}:{frame[2]}"
    return None


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text


def root_exception(log_lines: list[str]) -> str | None:
    """The first exception line of a log: the cause, before any chained re-raise."""
    for line in log_lines:
        if _EXCEPTION_LINE.match(line):
            return line.strip()
    return None


def _runner_exception(pid: int, node_ip: str, attempts: int = 8) -> str | None:
    """The root exception in the runner's stderr log. The log of a worker that just died
    can reach the log service a moment later, and a busy machine answers slowly: retry."""
    import ray
    from ray.util.state import get_log

    # Without an address the state API joins the cluster named in Ray's address file: the
    # last one `ray start` launched on this machine, not necessarily this run's.
    address = ray.get_runtime_context().gcs_address if ray.is_initialized() else None
    for attempt in range(attempts):
        try:
            chunks = list(
                get_log(
                    address=address,
                    pid=pid,
                    node_ip=node_ip,
                    suffix="err",
                    tail=1000,
                    timeout=30,
                )
            )
        except Exception:  # the state API is best effort: fall back to Ray's own message
            chunks = []
        cause = root_exception([line for chunk in chunks for line in chunk.splitlines()])
        if cause:
            return cause
        time.sleep(1.0 + attempt)
    return None
