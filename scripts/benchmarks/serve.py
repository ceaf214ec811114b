"""Serving throughput and latency: `rlsuite.serve` under load over HTTP on localhost,
batched against unbatched, with direct in-process inference as the ceiling.

For each mode a server is started as a user starts it (`python -m rlsuite.serve`, one
replica, `--max-batch-size 1` for unbatched), then `concurrency` client threads, each
with its own keep-alive connection, post one input per request (a policy's observation,
or a classifier's image: benchmarks/serve_payloads.py) until `requests` requests are
answered or `max_seconds` pass. Requests/s is answered requests over the wall time;
latencies are per request, from send to the parsed answer. The clients share the machine
with the server: on few CPUs they cost it throughput.

The ceiling is the restored model's forward pass in this process, one input per call
(what an unbatched request cannot beat) and `batch` per call. The floor is Serve itself:
the same load on an app that reads each request and answers it with no model
(benchmarks/serve_floor.py), which no Serve app exceeds on the machine.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import http.client
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import ROOT, load_line, machine, run_child
from benchmarks.serve_payloads import Payload, ceiling, payload
from rlsuite.serving.startup import route_answers

START_TIMEOUT_S = 300
# Serve's HTTP path with no model (benchmarks/serve_floor.py): what batching cannot beat.
FLOOR = "serve floor"
REQUEST_TIMEOUT_S = 30


@dataclass(frozen=True)
class Load:
    mode: str
    """batched, unbatched or serve floor."""
    concurrency: int
    requests: int
    """Answered (status 200)."""
    failed: int
    wall_s: float
    p50_ms: float
    p99_ms: float

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.wall_s if self.wall_s else 0.0


@dataclass(frozen=True)
class ServeBenchResult:
    checkpoint: str
    kind: str
    """policy or image classifier (benchmarks/serve_payloads.py)."""
    proxy: str
    """serve (Serve's proxy actor) or haproxy (`rlsuite.serve --proxy haproxy`)."""
    max_batch_size: int
    loads: list[Load]
    ceiling_single_per_s: float
    """In-process forward passes per second with one input each."""
    ceiling_batch_obs_per_s: float
    """Inputs per second in in-process forward passes of `batch` inputs."""
    batch: int
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]

    def speedup(self, concurrency: int, over: str = "unbatched") -> float | None:
        """Batched requests/s over `over`'s (unbatched, or the serve floor's)."""
        rates = {
            load.mode: load.requests_per_s for load in self.loads if load.concurrency == concurrency
        }
        if rates.get(over):
            return rates.get("batched", 0.0) / rates[over]
        return None

    def report(self) -> str:
        lines = [
            f"checkpoint {self.checkpoint} ({self.kind}), --proxy {self.proxy}, batched: --max-batch-size {self.max_batch_size}",
            f"{'mode':<11} {'conc':>5} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'answered':>9} {'failed':>7}",
        ]
        for load in self.loads:
            lines.append(
                f"{load.mode:<11} {load.concurrency:>5} {load.requests_per_s:>9.1f} {load.p50_ms:>8.1f} {load.p99_ms:>8.1f} {load.requests:>9} {load.failed:>7}"
            )
        for concurrency in sorted({load.concurrency for load in self.loads}):
            speedup, of_floor = self.speedup(concurrency), self.speedup(concurrency, FLOOR)
            if speedup is not None and of_floor is not None:
                lines.append(
                    f"concurrency {concurrency}: batched {speedup:.2f}x unbatched, {of_floor:.0%} of the serve floor's requests/s"
                )
        lines.append(
            f"ceiling (in-process model): {self.ceiling_single_per_s:.0f} calls/s of 1 input, {self.ceiling_batch_obs_per_s:.0f} inputs/s in calls of {self.batch}"
        )
        lines.append(load_line(self.machine_before, self.machine_after))
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for load, row in zip(self.loads, data["loads"], strict=True):
            row["requests_per_s"] = load.requests_per_s
        return data


def measure(
    path: Path | None,
    concurrencies: list[int],
    requests: int,
    max_seconds: float,
    max_batch_size: int,
    batch_wait_ms: float,
    proxy: str = "serve",
) -> ServeBenchResult:
    before = machine()
    with contextlib.ExitStack() as stack:
        if path is None:
            storage = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-serve-")))
            run_child(
                [
                    sys.executable,
                    "-m",
                    "rlsuite.run",
                    "experiments/ppo_cartpole.py",
                    "--smoke",
                    "--storage-path",
                    str(storage),
                ]
            )
            path = storage / "ppo_cartpole"
        from rlsuite.evaluation.locate import locate

        checkpoint = locate(path).checkpoint
        sent = payload(checkpoint)
        loads = []
        proxy_flag = ["--proxy", proxy]
        servers = {
            "batched": [*_serve_command(path, max_batch_size, batch_wait_ms), *proxy_flag],
            "unbatched": [*_serve_command(path, 1, batch_wait_ms), *proxy_flag],
            FLOOR: [sys.executable, str(Path(__file__).with_name("serve_floor.py")), *proxy_flag],
        }
        for mode, command in servers.items():
            with _server(command) as port:
                for concurrency in concurrencies:
                    loads.append(_load(port, mode, concurrency, sent, requests, max_seconds))
        single, batched, batch = ceiling(checkpoint, sent)
    return ServeBenchResult(
        str(checkpoint),
        sent.kind,
        proxy,
        max_batch_size,
        loads,
        single,
        batched,
        batch,
        before,
        machine(),
    )


def _serve_command(path: Path, max_batch_size: int, batch_wait_ms: float) -> list[str]:
    return [
        sys.executable, "-m", "rlsuite.serve", str(path),
        "--max-batch-size", str(max_batch_size), "--batch-wait-ms", str(batch_wait_ms),
        "--start-timeout", str(START_TIMEOUT_S - 30),  # its own reason before the bench gives up
    ]  # fmt: skip


@contextlib.contextmanager
def _server(command: list[str]) -> Iterator[int]:
    """The port of `command --port PORT` once it answers GET /ready."""
    port = _free_port()
    command = [*command, "--port", str(port)]
    with tempfile.TemporaryFile("w+") as out:
        server = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not _ready(port):
                if server.poll() is not None or time.monotonic() > deadline:
                    out.seek(0)
                    raise RuntimeError(f"the server did not start: {out.read()[-2000:]}")
                time.sleep(1)
            yield port
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=90)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _load(
    port: int,
    mode: str,
    concurrency: int,
    sent: Payload,
    requests: int,
    max_seconds: float,
) -> Load:
    """`requests` requests from `concurrency` clients, or fewer when `max_seconds` pass."""
    _post(_connection(port), sent, 0)  # warm-up
    counter = iter(range(requests))
    lock = threading.Lock()
    latencies: list[float] = []
    failed = [0]
    start = time.perf_counter()
    deadline = start + max_seconds

    def client() -> None:
        connection = _connection(port)
        while time.perf_counter() < deadline:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            started = time.perf_counter()
            ok = _post(connection, sent, i)
            with lock:
                if ok:
                    latencies.append(time.perf_counter() - started)
                else:
                    failed[0] += 1

    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(client) for _ in range(concurrency)]:
            future.result()
    wall_s = time.perf_counter() - start
    ms = np.array(latencies) * 1000 if latencies else np.zeros(1)
    return Load(
        mode,
        concurrency,
        len(latencies),
        failed[0],
        wall_s,
        float(np.percentile(ms, 50)),
        float(np.percentile(ms, 99)),
    )


def _connection(port: int) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)


def _post(connection: http.client.HTTPConnection, sent: Payload, i: int) -> bool:
    body, headers = sent.bodies[i % len(sent.bodies)], {"Content-Type": sent.content_type}
    try:
        connection.request("POST", sent.route, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        connection.close()
        return False


def _ready(port: int) -> bool:
    return route_answers("127.0.0.1", port, "/ready", REQUEST_TIMEOUT_S)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
