"""The message a user needs when a trial fails, found where Ray left it.

RLlib ends an env runner whose env raised with `sys.exit(1)`, so the trial only sees
`ActorDiedError` ("the actor died unexpectedly"); the env's own exception is in that
runner's log. Ray's state API reads the log from whichever node the runner ran on.

That lookup runs inside Tune's event loop (its callbacks), where a SIGTERM leaves the run
20 s (`shutdown.GRACE_S`) to pause its trials, so it is bounded to `LOOKUP_S` in all (Ray
2.60's `get_log` sets no client timeout: a busy dashboard could hold it for good) and
skipped once a stop was asked (`stop_lookups_when`).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable

from rlsuite.tracebacks import first_cause, first_raised

# Tune appends one such block to a trial's error.txt per failure (`Trial.handle_error`),
# across restarts (`--max-failures`) and `--resume`.
_FAILURE = re.compile(r"^Failure # \d+(?: \(occurred at [^)\n]*\))?[ \t]*$", re.MULTILINE)
_RUNNER = re.compile(
    r"class_name: (\w*EnvRunner)\s+actor_id: \w+\s+pid: (\d+)(?:\s+namespace: \S+)?\s+ip: ([\d.]+)"
)


def explain(error_text: str, wait_s: float | None = None) -> str:
    """One line: the env runner's own exception when a runner died, else the exception the
    error's traceback starts from, with the last place outside the installed libraries it
    passed through (the user's env, callback or module, where they raised). Of an
    error.txt, its last failure: the one a restart or the end of the trial follows.
    `wait_s`: the most to wait for a dead runner's log (`LOOKUP_S` where None)."""
    error_text = last_failure(error_text)
    match = _RUNNER.search(error_text)
    if match:
        runner, pid, ip = match.groups()
        cause = _runner_exception(int(pid), ip, LOOKUP_S if wait_s is None else wait_s)
        if cause:
            return f"{runner} (pid {pid}) failed: {cause}"
    return first_cause(error_text)


def last_failure(error_text: str) -> str:
    """The last "Failure # N" block of a trial's error.txt; other text as it is."""
    headers = list(_FAILURE.finditer(error_text))
    last = error_text[headers[-1].end() :] if headers else ""
    return last if last.strip() else error_text


LOOKUP_S = 4.0
"""The most a failure's line in Tune's loop waits for a dead runner's log, all tries."""
_stop_asked: Callable[[], bool] = bool  # bool() is False: until the launcher says how to tell


def stop_lookups_when(stop_asked: Callable[[], bool]) -> None:
    """No runner log lookups while `stop_asked()`: the launcher wires in its SIGTERM and
    Ctrl-C state (rlsuite.launcher.shutdown, which imports the live view that shows these
    lines, so this module cannot import it)."""
    global _stop_asked
    _stop_asked = stop_asked


def _runner_exception(pid: int, node_ip: str, wait_s: float) -> str | None:
    """The first exception in the runner's stderr log, or None when none came within
    `wait_s`. The log of a worker that just died can reach the log service a moment
    later: retried until then, in a thread of its own that is left behind when the time is
    up (`get_log` cannot be cut short from outside)."""
    if _stop_asked():
        return None
    address = _own_address()
    deadline = time.monotonic() + wait_s
    found: list[str] = []
    lookup = threading.Thread(
        target=_look_up, args=(pid, node_ip, address, deadline, found), daemon=True
    )
    lookup.start()
    while lookup.is_alive() and time.monotonic() < deadline and not _stop_asked():
        lookup.join(0.1)  # in slices: a SIGTERM meanwhile ends the wait
    return found[0] if found else None


def _look_up(
    pid: int, node_ip: str, address: str | None, deadline: float, found: list[str]
) -> None:
    while not _stop_asked():
        left = deadline - time.monotonic()
        if left <= 0:
            return
        try:
            lines = _read_log(pid, node_ip, address, left)
        except Exception:  # the state API is best effort: fall back to Ray's own message
            lines = []
        cause = first_raised(lines)
        if cause:
            found.append(cause)
            return
        time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))


def _own_address() -> str | None:
    """This run's cluster. Without an address the state API joins the cluster named in
    Ray's address file: the last one `ray start` launched on this machine, not necessarily
    this run's."""
    import ray

    return ray.get_runtime_context().gcs_address if ray.is_initialized() else None


def _read_log(pid: int, node_ip: str, address: str | None, timeout_s: float) -> list[str]:
    from ray.util.state import get_log

    chunks = get_log(
        address=address,
        pid=pid,
        node_ip=node_ip,
        suffix="err",
        tail=1000,
        timeout=max(1, int(timeout_s)),  # the log service's own limit, in whole seconds
    )
    return [line for chunk in chunks for line in chunk.splitlines()]
