"""Deploy the app and wait, with an end, until it serves.

`serve.run` waits without a deadline for an app whose replicas never start (resources the
cluster never frees, a model that never finishes loading), and when a replica's constructor
fails it raises "Failed to update the deployments ['rlsuite']", the replica's own error
left in the controller's log. So the app is deployed without Serve's wait
(`serve.run_many(..., wait_for_applications_running=False)`) and `serve.status()` is
polled instead: the app RUNNING with a healthy proxy, and on a local Ray its HTTP route
answering (HAProxy's ingress is healthy before it routes to the replica), is serving;
DEPLOY_FAILED, or the deadline, is one line naming the replica's error or the state Serve
was stuck in.
"""

from __future__ import annotations

import http.client
import re
import time
from collections.abc import Callable
from typing import Any

from rlsuite.errors import ServeStartFailed

POLL_S = 0.5
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Ray colours the actor's name in the traceback


def deploy(
    app: Any, name: str, timeout_s: float, logs: str, health: tuple[str, int] | None
) -> None:
    """Deploy `app` as `name` at `/` and return once it serves; ServeStartFailed if its
    replicas fail or it does not serve within `timeout_s` (`logs`: where Serve's logs go;
    `health`: the host and port whose GET /healthz answers 200 once requests get through,
    or None)."""
    from ray import serve

    serve.run_many(
        [serve.RunTarget(app, name=name, route_prefix="/")], wait_for_applications_running=False
    )
    answers = (lambda: route_answers(*health, "/healthz")) if health else (lambda: True)
    wait_until_serving(serve.status, name, timeout_s, logs, answers)


def wait_until_serving(
    status: Callable[[], Any],
    name: str,
    timeout_s: float,
    logs: str,
    answers: Callable[[], bool] = lambda: True,
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
        started = state == "RUNNING" and "HEALTHY" in proxies
        if started and answers():
            return
        if clock() >= deadline:
            where = "the HTTP route does not answer" if started else stuck_in(app, state, proxies)
            raise ServeStartFailed(
                f"not serving after {timeout_s:g} s: {where} (Serve's logs: {logs}); if the model needs longer to load, raise --start-timeout"
            )
        sleep(POLL_S)


def local_address(host: str, port: int) -> tuple[str, int]:
    """Where a client on this machine reaches a server listening on `host`."""
    return ("127.0.0.1" if host in ("0.0.0.0", "::", "") else host), port


def route_answers(host: str, port: int, route: str, timeout_s: float = 2.0) -> bool:
    """GET `route` answers 200; http.client, so no proxy settings apply."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        connection.request("GET", route)
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def replica_error(app: Any) -> str:
    """The exception line that ends a failed deployment's message (its traceback)."""
    for deployment in app.deployments.values():
        lines = [ANSI.sub("", line).strip() for line in deployment.message.splitlines()]
        lines = [line for line in lines if line]
        if lines:
            return lines[-1]
    return app.message or "Serve gave no reason"


def proxy_failure(error: Exception) -> str:
    """Why Serve's proxy did not start, in one line: HAProxy's first ALERT (its own reason
    for exiting, e.g. a port it could not bind), else the error's last line."""
    lines = [ANSI.sub("", line).strip() for line in str(error).splitlines()]
    alerts = [line.split(" : ", 1)[-1] for line in lines if line.startswith("[ALERT]")]
    if alerts:
        return f"HAProxy: {alerts[0]}"
    said = [line for line in lines if line]
    return said[-1] if said else type(error).__name__


def stuck_in(app: Any, state: str, proxies: list[str]) -> str:
    """Where the start stands, e.g. "app DEPLOYING, replicas STARTING 1, proxy HEALTHY",
    with the first line of what Serve says about the deployment."""
    replicas: dict[str, int] = {}
    for deployment in app.deployments.values() if app is not None else ():
        for replica_state, count in deployment.replica_states.items():
            key = str(getattr(replica_state, "value", replica_state))
            replicas[key] = replicas.get(key, 0) + count
    counted = ", ".join(f"{key} {count}" for key, count in sorted(replicas.items()))
    parts = [
        f"app {state}",
        f"replicas {counted or 'none yet'}",
        f"proxy {'/'.join(sorted(set(proxies))) or 'none yet'}",
    ]
    # Serve's own word on a slow start, e.g. replicas not scheduled for want of resources.
    said = [ANSI.sub("", d.message).strip() for d in app.deployments.values()] if app else []
    said = [message.splitlines()[0] for message in said if message]
    return "; ".join([", ".join(parts), *(f"Serve: {message}" for message in said)])
