"""Deploy the app and wait, with an end, until it serves.

`serve.run` waits without a deadline for an app whose replicas never start (resources the
cluster never frees, a model that never finishes loading), and when a replica's constructor
fails it raises "Failed to update the deployments ['rlsuite']", the replica's own error
left in the controller's log. So the app is deployed without Serve's wait
(`serve.run_many(..., wait_for_applications_running=False)`) and `serve.status()` is
polled instead: the app RUNNING with a healthy proxy is serving; DEPLOY_FAILED, or the
deadline, is one line naming the replica's error or the state Serve was stuck in.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from rlsuite.errors import ServeStartFailed

POLL_S = 0.5
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Ray colours the actor's name in the traceback


def deploy(app: Any, name: str, timeout_s: float, logs: str) -> None:
    """Deploy `app` as `name` at `/` and return once it serves; ServeStartFailed if its
    replicas fail or it does not serve within `timeout_s` (`logs`: where Serve's logs go)."""
    from ray import serve

    serve.run_many(
        [serve.RunTarget(app, name=name, route_prefix="/")], wait_for_applications_running=False
    )
    wait_until_serving(serve.status, name, timeout_s, logs)


def wait_until_serving(
    status: Callable[[], Any],
    name: str,
    timeout_s: float,
    logs: str,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    deadline = clock() + timeout_s
    while True:
        current = status()
        app = current.applications.get(name)
        state = str(app.status.value) if app is not None else "NOT_STARTED"
        if state == "DEPLOY_FAILED":
            raise ServeStartFailed(
                f"the model's replicas failed to start: {replica_error(app)} (the traceback: Serve's controller log in {logs})"
            )
        proxies = [str(p.value) for p in current.proxies.values()]
        if state == "RUNNING" and "HEALTHY" in proxies:
            return
        if clock() >= deadline:
            raise ServeStartFailed(
                f"not serving after {timeout_s:g} s: {stuck_in(app, state, proxies)} (Serve's logs: {logs}); if the model needs longer to load, raise --start-timeout"
            )
        sleep(POLL_S)


def replica_error(app: Any) -> str:
    """The exception line that ends a failed deployment's message (its traceback)."""
    for deployment in app.deployments.values():
        lines = [ANSI.sub("", line).strip() for line in deployment.message.splitlines()]
        lines = [line for line in lines if line]
        if lines:
            return lines[-1]
    return app.message or "Serve gave no reason"


def stuck_in(app: Any, state: str, proxies: list[str]) -> str:
    """Where the start stands, e.g. "app DEPLOYING, replicas STARTING 1, proxy HEALTHY"."""
    replicas: dict[str, int] = {}
    for deployment in app.deployments.values() if app is not None else ():
        for replica_state, count in deployment.replica_states.items():
            key = str(getattr(replica_state, "value", replica_state))
            replicas[key] = replicas.get(key, 0) + count
    counted = ", ".join(f"{key} {count}" for key, count in sorted(replicas.items()))
    return ", ".join(
        [
            f"app {state}",
            f"replicas {counted or 'none yet'}",
            f"proxy {'/'.join(sorted(set(proxies))) or 'none yet'}",
        ]
    )
