"""Serving throughput and latency: `rlsuite.serve` under load over HTTP on localhost,
batched against unbatched, with direct in-process inference as the ceiling.

For each mode a server is started as a user starts it (`python -m rlsuite.serve`, one
replica, `--max-batch-size 1` for unbatched), then `concurrency` clients, each with its
own keep-alive connection, post one input per request (a policy's observation, or a
classifier's image: benchmarks/serve_payloads.py) until `requests` requests are answered
or `max_seconds` pass (benchmarks/serve_client.py). Requests/s is answered requests over
the wall time; latencies are per request, from send to the parsed answer. The clients
share the machine with the server: on few CPUs they cost it throughput, which is why each
load reports the client's CPU time per request.

The ceiling is the restored model's forward pass in this process, one input per call
(what an unbatched request cannot beat) and `batch` per call. The floor is Serve itself:
the same load on an app that reads each request and answers it with no model
(benchmarks/serve_floor.py), which no Serve app exceeds on the machine.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, machine, run_child
from benchmarks.serve_client import REQUEST_TIMEOUT_S, Request, run_load
from benchmarks.serve_payloads import Payload, ceiling, payload
from benchmarks.serve_report import FLOOR, report, speedup
from rlsuite.serving.startup import route_answers

START_TIMEOUT_S = 300
WARM_UP_ROUNDS = 4
"""Untimed requests per client before each load."""


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
    client_cpu_ms: float = 0.0
    """The load generator's CPU time per answered request (benchmarks/serve_client.py)."""
    failures: dict[str, int] = field(default_factory=dict)
    """The failed requests by what came back (`HTTP 503`, an exception's name)."""
    round: int = 1

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
    client: str
    """The load generator: asyncio or threads (benchmarks/serve_client.py)."""
    max_batch_size: int
    loads: list[Load]
    ceiling_single_per_s: float
    """In-process forward passes per second with one input each."""
    ceiling_batch_obs_per_s: float
    """Inputs per second in in-process forward passes of `batch` inputs."""
    batch: int
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]
    rounds: int = 1
    """Each round starts every server once, in turn, and loads it at each concurrency."""

    def speedup(self, concurrency: int, over: str = "unbatched") -> float | None:
        """Batched requests/s over `over`'s (unbatched, or the serve floor's): the ratio
        of their medians over rounds, None where either side's rounds differ by more
        than 25% (benchmarks/common.py) or a side is missing."""
        return speedup(self.loads, concurrency, over)

    def report(self) -> str:
        return report(self)

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
    client: str = "asyncio",
    rounds: int = 1,
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
        for round_ in range(1, rounds + 1):  # alternating: a slow minute hits every mode
            for mode, command in servers.items():
                with _server(command) as port:
                    loads += [
                        _load(port, mode, concurrency, sent, requests, max_seconds, client, round_)
                        for concurrency in concurrencies
                    ]
        single, batched, batch = ceiling(checkpoint, sent)
    return ServeBenchResult(
        str(checkpoint),
        sent.kind,
        proxy,
        client,
        max_batch_size,
        loads,
        single,
        batched,
        batch,
        before,
        machine(),
        rounds,
    )


def _serve_command(path: Path, max_batch_size: int, batch_wait_ms: float) -> list[str]:
    return [
        sys.executable, "-m", "rlsuite.serve", str(path),
        "--max-batch-size", str(max_batch_size), "--batch-wait-ms", str(batch_wait_ms),
        "--start-timeout", str(START_TIMEOUT_S - 30),  # its own reason before the bench gives up
    ]  # fmt: skip


@contextlib.contextmanager
def _server(command: list[str]) -> Iterator[int]:
    """The port of `command --port PORT` once it says it is serving. Not sooner: GET /ready
    answers through Serve's proxy actor while HAProxy still reloads, and connections
    opened then were closed, or held by an HAProxy that had no route yet (404s)."""
    port = _free_port()
    command = [*command, "--port", str(port)]
    with tempfile.NamedTemporaryFile("w+") as out:
        server = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        said = Path(out.name)  # read by name: the server's offset in `out` stays its own
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not (_says_serving(said) and _ready(port)):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {said.read_text()[-2000:]}")
                time.sleep(1)
            yield port
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=90)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _says_serving(output: Path) -> bool:
    return any(line.startswith("serving ") for line in output.read_text().splitlines())


def _load(
    port: int,
    mode: str,
    concurrency: int,
    sent: Payload,
    requests: int,
    max_seconds: float,
    client: str,
    round_: int = 1,
) -> Load:
    """`requests` requests from `concurrency` clients, or fewer when `max_seconds` pass."""
    request = Request(sent.route, sent.content_type, sent.bodies)
    # Untimed first: a server just started is not yet the server under load (HAProxy,
    # settling after Serve's first reconfiguration, closed each of 64 new connections
    # once, and the first round's p99 was 5x the next's).
    run_load(client, port, request, concurrency, WARM_UP_ROUNDS * concurrency, max_seconds)
    tally = run_load(client, port, request, concurrency, requests, max_seconds)
    return Load(
        mode,
        concurrency,
        tally.answered,
        sum(tally.failures.values()),
        tally.wall_s,
        tally.p50_ms,
        tally.p99_ms,
        tally.client_cpu_ms,
        tally.failures,
        round_,
    )


def _ready(port: int) -> bool:
    return route_answers("127.0.0.1", port, "/ready", REQUEST_TIMEOUT_S)


def _free_port() -> int:
    """A port for a server that binds it seconds later, once Ray runs: not from the
    kernel's ephemeral range (port 0), where Ray's own connections may take it first."""
    from rlsuite.serving.haproxy import free_ports

    return free_ports(1)[0]
