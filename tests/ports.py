"""Ports for servers the tests start."""

from __future__ import annotations

import random
import socket

# Below the kernel's ephemeral range (32768-60999 by default), where every outgoing
# connection takes its local port: a port the OS hands out for port 0 can be taken by the
# Ray that a test then starts before its server binds it (a CI run failed on that), and
# above Ray's worker ports (10002-19999); below the ports `rlsuite.serve --proxy haproxy`
# gives HAProxy (25000-29999) and Serve's direct ingress its replicas (30000-31000).
_TEST_PORTS = range(20_000, 25_000)


def free_port() -> int:
    """A port free now, from a range that neither Ray nor outgoing connections draw from."""
    for port in random.SystemRandom().sample(_TEST_PORTS, 200):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port among 200 tried in {_TEST_PORTS}")
