"""bench_serve's load generators against a small HTTP/1.1 server on 127.0.0.1: both
clients count what the server answers, by status, follow a server that closes the
connection, and stop at their deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchmarks.serve_client import Request, run_load

CLOSE_EVERY = 7
"""The server closes each connection after this many requests (`Connection: close`)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    served = 0

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if body == b"slow":
            time.sleep(0.05)
        if body == b"hang":
            time.sleep(2)
        if body == b"no length":  # an error page without Content-Length, then the close
            self.send_response(502)
            self.end_headers()
            self.wfile.write(b"bad gateway")
            self.close_connection = True
            return
        self.served += 1
        answer = b'{"actions": [0]}'
        self.send_response(503 if body == b"refused" else 200)
        self.send_header("Content-Length", str(len(answer)))
        if self.served % CLOSE_EVERY == 0:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("client", ["asyncio", "threads"])
def test_every_request_is_counted_by_what_came_back(port: int, client: str) -> None:
    sent = Request("/act", "application/json", [b"ok", b"ok", b"refused"])
    tally = run_load(client, port, sent, concurrency=4, requests=60, max_seconds=30)
    # Each connection closes after 7 requests: followed, not counted as failures.
    assert tally.answered == 40 and tally.failures == {"HTTP 503": 20}
    assert 0 < tally.p50_ms <= tally.p99_ms and tally.wall_s > 0 and tally.client_cpu_ms > 0


@pytest.mark.parametrize("client", ["asyncio", "threads"])
def test_a_load_stops_at_its_deadline(port: int, client: str) -> None:
    sent = Request("/act", "application/json", [b"slow"])
    tally = run_load(client, port, sent, concurrency=2, requests=10_000, max_seconds=0.3)
    assert 2 <= tally.answered < 40 and not tally.failures
    assert tally.wall_s < 5


@pytest.mark.parametrize("client", ["asyncio", "threads"])
def test_a_server_that_is_not_there_is_failures_not_a_hang(client: str) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        free = int(sock.getsockname()[1])
    sent = Request("/act", "application/json", [b"ok"])
    tally = run_load(client, free, sent, concurrency=2, requests=6, max_seconds=5)
    assert tally.answered == 0 and tally.failures == {"ConnectionRefusedError": 6}


def test_an_answer_without_length_counts_by_status_and_a_silent_server_times_out(
    port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import serve_client

    monkeypatch.setattr(serve_client, "REQUEST_TIMEOUT_S", 0.3)
    sent = Request("/act", "application/json", [b"ok", b"no length", b"hang"])
    started = time.perf_counter()
    tally = run_load("asyncio", port, sent, concurrency=1, requests=6, max_seconds=30)
    assert tally.answered == 2 and tally.failures == {"HTTP 502": 2, "TimeoutError": 2}
    assert time.perf_counter() - started < 10
