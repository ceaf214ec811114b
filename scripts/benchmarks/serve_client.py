"""bench_serve's load generators: `concurrency` clients on keep-alive connections to
127.0.0.1, each posting one body at a time until `requests` are sent or `max_seconds`
pass; every wait for a connection or an answer ends after `REQUEST_TIMEOUT_S`.

Two clients, because on a 2-vCPU machine the load generator shares the CPUs with the
server it measures, and every CPU-second it spends is one the server does not get:
- `threads`: one thread per client with `http.client` (the first client, kept so that
  figures measured with it can be repeated). Python's HTTP response parsing and the GIL
  passed between 64 threads cost a share of the machine per request.
- `asyncio`: every client a coroutine on one event loop (uvloop where installed, as
  uvicorn uses it), writing prebuilt request bytes and reading the answer's head and as
  many bytes as its `Content-Length` says. It does what `wrk` or `hey` do for load
  generators, in Python because no C load generator is installable from the package
  registries here.
Each load also reports the client's own CPU time per answered request (this process's
CPU time during the load; the server runs in other processes), so the share the client
took is on the record.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

REQUEST_TIMEOUT_S = 30


@dataclass(frozen=True)
class Request:
    route: str
    content_type: str
    bodies: list[bytes]
    """Sent round-robin."""


@dataclass(frozen=True)
class Tally:
    answered: int
    """Requests answered with status 200."""
    failures: dict[str, int]
    """Requests not answered with 200, by what came back: `HTTP 503`, an exception's name."""
    wall_s: float
    p50_ms: float
    p99_ms: float
    client_cpu_ms: float
    """The client's CPU time per answered request."""


def run_load(
    client: str, port: int, sent: Request, concurrency: int, requests: int, max_seconds: float
) -> Tally:
    load = LOADS[client]
    cpu_start, start = time.process_time(), time.perf_counter()
    latencies, failures = load(port, sent, concurrency, requests, start + max_seconds)
    wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
    ms = np.array(latencies) * 1000 if latencies else np.zeros(1)
    return Tally(
        len(latencies),
        dict(failures),
        wall_s,
        float(np.percentile(ms, 50)),
        float(np.percentile(ms, 99)),
        cpu_s * 1000 / max(len(latencies), 1),
    )


def _threads(
    port: int, sent: Request, concurrency: int, requests: int, deadline: float
) -> tuple[list[float], Counter[str]]:
    counter = iter(range(requests))
    lock = threading.Lock()
    latencies: list[float] = []
    failures: Counter[str] = Counter()

    def client() -> None:
        connection = _connection(port)
        try:
            while time.perf_counter() < deadline:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                started = time.perf_counter()
                failure = _post(connection, sent, i)
                with lock:
                    if failure is None:
                        latencies.append(time.perf_counter() - started)
                    else:
                        failures[failure] += 1
        finally:
            connection.close()

    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(client) for _ in range(concurrency)]:
            future.result()
    return latencies, failures


def _connection(port: int) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)


def _post(connection: http.client.HTTPConnection, sent: Request, i: int) -> str | None:
    """None if answered with 200, else what came back."""
    body, headers = sent.bodies[i % len(sent.bodies)], {"Content-Type": sent.content_type}
    try:
        connection.request("POST", sent.route, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
    except (OSError, http.client.HTTPException) as error:
        connection.close()
        return type(error).__name__
    return None if response.status == 200 else f"HTTP {response.status}"


def _asyncio_load(
    port: int, sent: Request, concurrency: int, requests: int, deadline: float
) -> tuple[list[float], Counter[str]]:
    wires = [_wire(sent, port, body) for body in sent.bodies]
    latencies: list[float] = []
    failures: Counter[str] = Counter()
    counter = iter(range(requests))

    async def client() -> None:
        streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        while time.perf_counter() < deadline:
            i = next(counter, None)
            if i is None:
                break
            started = time.perf_counter()
            try:
                if streams is None:
                    connecting = asyncio.open_connection("127.0.0.1", port)
                    streams = await asyncio.wait_for(connecting, REQUEST_TIMEOUT_S)
                reader, writer = streams
                writer.write(wires[i % len(wires)])
                status, keep_alive = await asyncio.wait_for(_answer(reader), REQUEST_TIMEOUT_S)
            except Exception as error:  # any failure is counted, by its kind: none ends the load
                failures[type(error).__name__] += 1
            else:
                if status == 200:
                    latencies.append(time.perf_counter() - started)
                else:
                    failures[f"HTTP {status}"] += 1
                if keep_alive:
                    continue
            if streams is not None:
                streams[1].close()
                streams = None
        if streams is not None:
            streams[1].close()

    async def all_clients() -> None:
        await asyncio.gather(*(client() for _ in range(concurrency)))

    _event_loop_run(all_clients)
    return latencies, failures


def _event_loop_run(main: Callable[[], object]) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())  # type: ignore[arg-type]
        return
    uvloop.run(main())  # type: ignore[arg-type]


def _wire(sent: Request, port: int, body: bytes) -> bytes:
    head = (
        f"POST {sent.route} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: {sent.content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


async def _answer(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """The response's status and whether the connection stays open, its body read by
    Content-Length (the servers measured here send it). An answer without one is read no
    further: its status counts, and the connection closes, as its end cannot be found."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    version, status = status_line.split(" ", 2)[:2]
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" not in headers:
        return int(status), False
    await reader.readexactly(int(headers["content-length"]))
    # As http.client does: a server that says it closes the connection is not an error.
    connection = headers.get("connection", "").lower()
    return int(status), connection == "keep-alive" or (
        version != "HTTP/1.0" and connection != "close"
    )


LOADS: dict[str, Callable[[int, Request, int, int, float], tuple[list[float], Counter[str]]]] = {
    "asyncio": _asyncio_load,
    "threads": _threads,
}
