"""The message a user needs when a trial fails, found where Ray left it.

RLlib ends an env runner whose env raised with `sys.exit(1)`, so the trial only sees
`ActorDiedError` ("the actor died unexpectedly"); the env's own exception is in that
runner's log. Ray's state API reads the log from whichever node the runner ran on.
"""

from __future__ import annotations

import re
import time

from rlsuite.tracebacks import first_cause, first_raised

_RUNNER = re.compile(
    r"class_name: (\w*EnvRunner)\s+actor_id: \w+\s+pid: (\d+)(?:\s+namespace: \S+)?\s+ip: ([\d.]+)"
)


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


def _runner_exception(pid: int, node_ip: str, attempts: int = 8) -> str | None:
    """The first exception in the runner's stderr log. The log of a worker that just died
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
        cause = first_raised([line for chunk in chunks for line in chunk.splitlines()])
        if cause:
            return cause
        time.sleep(1.0 + attempt)
    return None
