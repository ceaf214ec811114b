"""`rlsuite.serve --proxy haproxy`: HAProxy's stats and metrics ports are chosen where the
kernel and Ray hand none out, and an HAProxy that still cannot bind one is one line
naming HAProxy's own reason, exit 1, not Ray's traceback."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

import pytest

from rlsuite.errors import UsageError
from rlsuite.serve import main as serve_main
from rlsuite.serving import haproxy
from rlsuite.serving.startup import proxy_failure
from tests.ports import free_port


def test_ports_come_from_where_no_one_else_hands_ports_out() -> None:
    """Not the kernel's default ephemeral range (32768-60999), Ray's worker ports
    (10002-19999), the tests' servers' (tests/ports.py) or the replicas' own HTTP ports
    of Serve's direct ingress, which HAProxy mode turns on."""
    from ray.serve._private import constants

    from tests.ports import _TEST_PORTS

    low, high = haproxy.PORT_RANGE
    taken = [
        range(10002, 20000),
        _TEST_PORTS,
        range(
            constants.RAY_SERVE_DIRECT_INGRESS_MIN_HTTP_PORT,
            constants.RAY_SERVE_DIRECT_INGRESS_MAX_HTTP_PORT + 1,
        ),
        range(32768, 61000),
    ]
    assert not any(set(range(low, high + 1)) & set(others) for others in taken)
    seed = 7
    first = random.Random(seed).randint(low, high)
    with socket.socket() as bound:  # the first port the seeded pick tries: skipped
        bound.bind(("", first))
        ports = haproxy.free_ports(2, seed=seed)
    assert len(set(ports)) == 2 and first not in ports
    assert all(low <= port <= high for port in ports)
    own = random.Random(seed).randint(low, high)  # the server's own --port: never chosen
    assert own not in haproxy.free_ports(2, seed=seed, exclude={own})


def test_no_free_ports_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as bound:
        bound.bind(("", 0))
        port = int(bound.getsockname()[1])
        monkeypatch.setattr(haproxy, "PORT_RANGE", (port, port))
        with pytest.raises(UsageError, match=r"no 2 free ports .* use --proxy serve"):
            haproxy.free_ports(2)


def test_proxy_failure_is_haproxys_own_alert_or_the_last_line() -> None:
    said = RuntimeError(
        "HAProxy crashed during startup: [NOTICE]   (1) : haproxy version is 2.8\n"
        "[ALERT]    (1) : Binding [cfg:45] for frontend prometheus: cannot bind socket "
        "(Address already in use) for [0.0.0.0:9101]\n"
        "[ALERT]    (1) : Some protocols failed to start their listeners! Exiting."
    )
    assert proxy_failure(said) == (
        "HAProxy: Binding [cfg:45] for frontend prometheus: cannot bind socket "
        "(Address already in use) for [0.0.0.0:9101]"
    )
    assert proxy_failure(TimeoutError("line one\n\nthe proxy never answered\n")) == (
        "the proxy never answered"
    )


def test_an_haproxy_that_cannot_bind_is_one_line_and_exit_1(
    cartpole_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """It was `ray.exceptions.RayTaskError` from `serve.start` with Ray's traceback: the
    metrics port, free when chosen, was taken by the time HAProxy bound it."""
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        stats = haproxy.free_ports(1)[0]
        monkeypatch.setattr(haproxy, "free_ports", lambda count, **kwargs: [stats, port])
        flags = ["--proxy", "haproxy", "--port", str(free_port()), "--start-timeout", "120"]
        code = serve_main([str(cartpole_run), *flags, "--logs-dir", str(tmp_path / "logs")])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and "Traceback" not in err, err
    assert lines[-1].startswith("rlsuite.serve: error: Serve did not start: HAProxy: ")
    assert "haproxy-*.log" in lines[-1]
    assert f"cannot bind socket (Address already in use) for [0.0.0.0:{port}]" in lines[-1]
    assert not any(line.startswith("INFO") for line in lines), err  # Serve's chatter


def test_serves_throughput_mode_unless_the_environment_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--proxy haproxy` runs Serve's throughput-optimized mode, with the replicas' log
    lines unbuffered on stderr; a setting the user's environment holds wins, and the
    environment is as before once the server ends."""
    mode, stderr = "RAY_SERVE_THROUGHPUT_OPTIMIZED", "RAY_SERVE_LOG_TO_STDERR"
    monkeypatch.delenv(mode, raising=False)
    monkeypatch.delenv(stderr, raising=False)
    with haproxy.enabled([25001, 25002]):
        assert os.environ[mode] == "1" and os.environ[stderr] == "1"
        assert os.environ["RAY_SERVE_REQUEST_PATH_LOG_BUFFER_SIZE"] == "1"
        assert os.environ["RAY_SERVE_ENABLE_HA_PROXY"] == "1"
    assert mode not in os.environ and stderr not in os.environ
    monkeypatch.setenv(mode, "0")
    with haproxy.enabled([25001, 25002]):
        assert os.environ[mode] == "0"
    assert os.environ[mode] == "0"
