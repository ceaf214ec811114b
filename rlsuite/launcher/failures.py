"""The message a user needs when a trial fails, found where Ray left it.

RLlib ends an env runner whose env raised with `sys.exit(1)`, so the trial only sees
`ActorDiedError` ("the actor died unexpectedly"); the env's own exception is in that
runner's log. Ray's state API reads the log from whichever node the runner ran on.
"""

from __future__ import annotations

import re
import time

_RUNNER = re.compile(
    r"class_name: (\w*EnvRunner)\s+actor_id: \w+\s+pid: (\d+)(?:\s+namespace: \S+)?\s+ip: ([\d.]+)"
)
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit): .+")


def explain(error_text: str) -> str:
    """One line: the env runner's own exception when a runner died, else the error's last line."""
    match = _RUNNER.search(error_text)
    if match:
        runner, pid, ip = match.groups()
        cause = _runner_exception(int(pid), ip)
        if cause:
            return f"{runner} (pid {pid}) failed: {cause}"
    return last_line(error_text)


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
