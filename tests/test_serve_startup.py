"""`rlsuite.serve` when Serve does not come to serve the model: a replica that fails to
load it is one line naming the replica's own error, exit 1; one that never finishes
loading ends at `--start-timeout` with the state Serve was stuck in. Neither leaves a
traceback or a running server behind.

The replicas' failures are brought about the way a cluster node brings them about (a
module its Python cannot import, a load that never returns): a `sitecustomize` that only
Ray's worker processes act on, so the server's own restore of the checkpoint succeeds.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rlsuite.errors import ServeStartFailed, UsageError
from rlsuite.serve import main as serve_main
from rlsuite.serving.command import check_address
from rlsuite.serving.startup import stuck_in, wait_until_serving
from tests.helpers import ROOT
from tests.ports import free_port

INJECTED = """
import os, sys, time
if sys.argv and sys.argv[0].endswith("default_worker.py"):
    class _Replica:
        def find_spec(self, name, path=None, target=None):
            if name == "rlsuite.serving.policies":  # what a replica imports to load a policy
                if os.environ["REPLICA_FAILURE"] == "hang":
                    time.sleep(3600)
                raise ImportError("no module named onnxruntime on this node")
            return None
    sys.meta_path.insert(0, _Replica())
"""


def serve_with_broken_replicas(
    cartpole: Path, tmp_path: Path, failure: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "inject").mkdir()
    (tmp_path / "inject" / "sitecustomize.py").write_text(INJECTED)
    paths = [str(tmp_path / "inject"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    command = [sys.executable, "-m", "rlsuite.serve", str(cartpole), "--port", str(free_port())]
    logs = ["--logs-dir", str(tmp_path / "logs"), "--start-timeout", "180"]  # flags may lower it
    return subprocess.run(
        [*command, *logs, *flags],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        env={**env, "REPLICA_FAILURE": failure},
    )


def test_a_replica_that_cannot_load_the_model_is_one_line_exit_1(
    cartpole_run: Path, tmp_path: Path
) -> None:
    done = serve_with_broken_replicas(cartpole_run, tmp_path, "import")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    serve_logs = tmp_path / "logs" / "ray" / "serve"
    assert line == (
        "rlsuite.serve: error: the model's replicas failed to start: ImportError: no module "
        f"named onnxruntime on this node (the traceback: Serve's controller log in {serve_logs})"
    )
    assert "serving " not in done.stdout
    controller_logs = "".join(p.read_text() for p in serve_logs.glob("controller_*.log"))
    assert "no module named onnxruntime on this node" in controller_logs


def test_a_replica_that_never_loads_ends_at_the_start_timeout(
    cartpole_run: Path, tmp_path: Path
) -> None:
    done = serve_with_broken_replicas(cartpole_run, tmp_path, "hang", "--start-timeout", "15")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    stuck = "app DEPLOYING, replicas STARTING 1, proxy (HEALTHY|STARTING)"  # a busy machine's proxy
    assert re.match(f"rlsuite.serve: error: not serving after 15 s: {stuck}(;| \\()", line), line
    assert line.endswith("if the model needs longer to load, raise --start-timeout")


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_start_timeout_that_is_not_a_positive_number_is_refused(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlsuite.serve import main

    with pytest.raises(SystemExit) as exit_:
        main(["results", "--start-timeout", value])
    assert exit_.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--start-timeout" in line


@dataclass
class App:
    status: Any
    deployments: dict[str, Any] = field(default_factory=dict)
    message: str = ""


@dataclass
class Deployment:
    message: str = ""
    replica_states: dict[str, int] = field(default_factory=dict)


@dataclass
class Status:
    applications: dict[str, App]
    proxies: dict[str, Any]


class Enum:
    """Serve's statuses are str enums: the waiting reads their `.value`."""

    def __init__(self, value: str) -> None:
        self.value = value


def statuses(*states: tuple[str, str]) -> Any:
    """Serve's status as it moves through (app, proxy) states, then stays at the last."""
    seen = [
        Status({"rlsuite": App(Enum(app), {"rlsuite": Deployment("", {"STARTING": 1})})}, {"node": Enum(proxy)})
        for app, proxy in states
    ]  # fmt: skip
    return lambda: seen.pop(0) if len(seen) > 1 else seen[0]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_serving_waits_for_the_app_and_a_healthy_proxy() -> None:
    clock = Clock()
    status = statuses(("DEPLOYING", "STARTING"), ("RUNNING", "STARTING"), ("RUNNING", "HEALTHY"))
    wait_until_serving(status, "rlsuite", 10, "logs", clock=clock, sleep=clock.sleep)
    assert clock.now == 1.0  # two polls waited, the third found it serving


def test_a_proxy_that_never_becomes_healthy_ends_at_the_deadline() -> None:
    clock = Clock()
    status = statuses(("RUNNING", "UNHEALTHY"))
    with pytest.raises(ServeStartFailed) as error:
        wait_until_serving(status, "rlsuite", 10, "logs", clock=clock, sleep=clock.sleep)
    assert clock.now == 10.0
    assert str(error.value).startswith(
        "not serving after 10 s: app RUNNING, replicas STARTING 1, proxy UNHEALTHY (Serve's logs: logs)"
    )


def test_a_route_that_does_not_answer_ends_at_the_deadline() -> None:
    """HAProxy's ingress is healthy before it routes to the replica: the route decides."""
    clock = Clock()
    status = statuses(("RUNNING", "HEALTHY"))
    with pytest.raises(ServeStartFailed) as error:
        wait_until_serving(
            status, "rlsuite", 5, "logs", lambda: False, clock=clock, sleep=clock.sleep
        )
    assert str(error.value).startswith("not serving after 5 s: the HTTP route does not answer (")
    answered = iter([False, False, True])
    wait_until_serving(
        status, "rlsuite", 5, "logs", lambda: next(answered), clock=clock, sleep=clock.sleep
    )


def test_the_stuck_state_says_what_serve_says_and_what_is_missing() -> None:
    waiting = (
        "Deployment 'rlsuite' has 1 replicas that have taken more than 30s to be scheduled.\nMore"
    )
    app = App(Enum("DEPLOYING"), {"rlsuite": Deployment(waiting, {"PENDING_ALLOCATION": 1})})
    assert stuck_in(app, "DEPLOYING", ["HEALTHY"]) == (
        "app DEPLOYING, replicas PENDING_ALLOCATION 1, proxy HEALTHY; Serve: "
        + waiting.split("\n")[0]
    )
    assert stuck_in(None, "NOT_STARTED", []) == "app NOT_STARTED, replicas none yet, proxy none yet"


def test_a_failed_deployment_names_the_last_line_of_the_replicas_traceback() -> None:
    message = "The deployment failed to start 3 times.\n\x1b[36mray::ServeReplica\x1b[39m\n  File x\nValueError: bad weights\n"
    app = App(Enum("DEPLOY_FAILED"), {"rlsuite": Deployment(message)}, "Failed to update")
    status = Status({"rlsuite": app}, {})
    with pytest.raises(ServeStartFailed) as error:
        wait_until_serving(lambda: status, "rlsuite", 10, "logs")
    assert str(error.value) == (
        "the model's replicas failed to start: ValueError: bad weights (the traceback: Serve's controller log in logs)"
    )


def test_a_port_whose_connections_wait_out_time_wait_is_free_to_serve_on() -> None:
    """A server restarted on its port: the old one's accepted connections, closed by it
    first, linger in TIME_WAIT. Serve's proxy binds with SO_REUSEADDR and listens there
    (Linux: where the old socket had it too, as the old proxy's had)."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = listener.accept()
            accepted.close()  # the server's side closes first: it waits out TIME_WAIT
            client.recv(1)  # the server's FIN
    with socket.socket() as plain, pytest.raises(OSError) as taken:
        plain.bind(("127.0.0.1", port))  # a socket without SO_REUSEADDR is refused
    assert taken.value.errno == errno.EADDRINUSE
    check_address("127.0.0.1", port, on_cluster=False)


def test_an_ipv6_host_is_probed_as_ipv6() -> None:
    with socket.socket(socket.AF_INET6) as taken:
        try:
            taken.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback on this machine")
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UsageError, match="cannot listen there"):
            check_address("::1", port, on_cluster=False)
    check_address("::1", port, on_cluster=False)


def test_on_a_cluster_the_port_is_not_probed_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --address the proxies listen on the cluster's nodes: a port taken on this
    machine says nothing about them. The host must still be one."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        check_address("127.0.0.1", port, on_cluster=True)
        with pytest.raises(UsageError, match="--host localhost:8000: not a host name"):
            check_address("localhost:8000", port, on_cluster=True)
        code = serve_main([str(tmp_path), "--port", str(port), "--address", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot listen there" not in err, err
