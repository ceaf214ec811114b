"""A client of `python -m rlsuite.serve` for the tests: the server started as a user starts
it (a subprocess on 127.0.0.1 and a free port), plain HTTP requests, Ctrl-C to stop; a
smoke run to serve (`train`) and a refusal read back (`refused`)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from rlsuite.serve import main as serve_main
from tests.helpers import ROOT, run_cli
from tests.ports import free_port

START_TIMEOUT_S = 240  # a local Ray plus Serve on a busy 2-CPU machine
STOP_TIMEOUT_S = 90
REQUEST_TIMEOUT_S = 30


def request(
    port: int, method: str, path: str, body: bytes = b"", content_type: str = "application/json"
) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": content_type})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def post(port: int, payload: Any) -> tuple[int, Any]:
    return request(port, "POST", "/act", json.dumps(payload).encode())


@contextlib.contextmanager
def serving(
    path: Path,
    logs: Path,
    *flags: str,
    env: dict[str, str] | None = None,
    stop_signals: tuple[signal.Signals, ...] = (signal.SIGINT,),
    late_signal: signal.Signals | None = None,
) -> Iterator[int]:
    """The server's port while it serves `path`; stopped afterwards with `stop_signals`,
    sent one right after another (as a wrapper that forwards a signal, such as `timeout`
    under `pkill`, sends it twice), then `late_signal` half a second after the server said
    it is stopping: while it shuts Ray down (an impatient user's second Ctrl-C)."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "rlsuite.serve",
        str(path),
        "--port",
        str(port),
        "--logs-dir",
        str(logs),
        "--start-timeout",  # the server's own reason comes before this harness gives up
        str(START_TIMEOUT_S - 30),
        *flags,
    ]
    printed_file = logs.parent / f"{logs.name}.out"
    with open(printed_file, "w") as child_out:  # the child's own offset: reads don't move it
        server = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=child_out,
            stderr=subprocess.STDOUT,
            env={**(env or os.environ), "PYTHONUNBUFFERED": "1"},
            # Started as a script's background job is (SIGINT ignored): Ctrl-C must stop
            # it all the same. Python leaves an inherited SIG_IGN in place; the server
            # installs its own handler.
            preexec_fn=_ignore_sigint,
        )
    out = open(printed_file)  # noqa: SIM115 (closed below)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        # "serving" first: GET /ready answers through Serve's proxy actor while HAProxy
        # still reloads, and a connection opened then may meet an HAProxy with no route.
        while not (_says_serving(out) and _ready(port)):
            out.seek(0)
            assert server.poll() is None, (
                f"the server ended (exit {server.returncode}): {out.read()[-2000:]}"
            )
            assert time.monotonic() < deadline, (
                f"not ready after {START_TIMEOUT_S} s: {out.read()[-2000:]}"
            )
            time.sleep(1)
        yield port
    finally:
        for stop_signal in stop_signals:
            server.send_signal(stop_signal)
        if late_signal is not None:
            _send_while_stopping(server, out, late_signal)
        try:
            server.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        out.seek(0)
        printed = out.read()
        out.close()
    assert server.returncode == 0, printed[-2000:]
    assert "rlsuite.serve: stopped" in printed and "Traceback" not in printed, printed[-2000:]


def _send_while_stopping(
    server: subprocess.Popen[bytes], out: IO[str], late: signal.Signals
) -> None:
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while server.poll() is None and time.monotonic() < deadline:
        out.seek(0)
        if "rlsuite.serve: stopping" in out.read():
            time.sleep(0.5)  # measured: 0.3-1.0 s after it the server is inside ray.shutdown
            if server.poll() is None:
                server.send_signal(late)
            return
        time.sleep(0.02)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _says_serving(out: IO[str]) -> bool:
    out.seek(0)
    return any(line.startswith("serving ") for line in out.read().splitlines())


def _ready(port: int) -> bool:
    try:
        return request(port, "GET", "/ready")[0] == 200
    except (OSError, http.client.HTTPException, json.JSONDecodeError):
        return False


def train(storage: Path, experiment: str) -> Path:
    run = run_cli(ROOT / "experiments" / f"{experiment}.py", "--smoke", storage=storage)
    assert run.returncode == 0, run.stderr[-2000:]
    return storage / experiment


def refused(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    code = serve_main([*map(str, args), "--port", str(free_port())])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]
