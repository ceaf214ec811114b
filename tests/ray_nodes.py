"""Ray clusters on this machine for the tests that join one: a one-node head (`ray_head`)
and two nodes (`two_node_cluster`: `ray start --head` plus a second `ray start
--address`), each `--block` in a session of its own, so that a test can stop the
cluster's processes, or only the second node's, without touching other tests' Ray (`ray
stop` would stop every Ray on the machine)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rlsuite.launcher.cluster import ensure_auth_token
from tests.helpers import RAY, TOKEN_ENV
from tests.ports import free_port


@dataclass(frozen=True)
class RayCluster:
    address: str
    env: dict[str, str]
    """The environment a driver joins it with (token authentication on)."""


@contextlib.contextmanager
def ray_head(num_cpus: int, *options: str) -> Iterator[RayCluster]:
    """A one-node Ray cluster of the caller's own: `ray start --head --block` in a session
    of its own, with a temp dir of its own (where `ray start` writes the address that
    `ray.init()` without one would join: other tests' Ray stays off it). Stopping it
    signals that session only: `ray stop` would stop every Ray on the machine."""
    ensure_auth_token()  # `ray start` with token auth refuses to start without one
    port = free_port()
    # Short: Ray's socket paths under it have a length limit.
    temp_dir = tempfile.mkdtemp(prefix="rlsuite-ray-", dir="/tmp")
    command = [RAY, "start", "--head", "--block", "--port", str(port), "--temp-dir", temp_dir]
    command += ["--num-cpus", str(num_cpus), "--dashboard-port", str(free_port()), *options]
    cluster = RayCluster(f"127.0.0.1:{port}", TOKEN_ENV)
    head = start_ray_node(command)
    try:
        wait_for_nodes(cluster.address, 1)
        yield cluster
    finally:
        stop_ray_node(head)
        shutil.rmtree(temp_dir, ignore_errors=True)


def start_ray_node(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command,
        env=TOKEN_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


class ClusterQueryError(RuntimeError):
    """A driver could not join the cluster or answer (a node may still be starting)."""


def ask_cluster(address: str, expression: str) -> str:
    """`expression` evaluated by a driver that joins the cluster at `address`, in a process
    of its own (the test process's Ray, if any, stays as it is); `ADDRESS`, `ray` and
    `list_actors` are in scope. The answer is read by a marker: Ray prints lines of its
    own to stdout too (seen here: "raylet has lagging heartbeats" on a busy machine)."""
    code = (
        "import ray\n"
        "from ray.util.state import list_actors\n"
        f"ADDRESS = {address!r}\n"
        "ray.init(address=ADDRESS, logging_level='ERROR')\n"
        f"print('ANSWER', {expression})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=TOKEN_ENV, capture_output=True, text=True, timeout=120
    )
    answers = [line for line in done.stdout.splitlines() if line.startswith("ANSWER ")]
    if done.returncode != 0 or not answers:
        raise ClusterQueryError(f"rc {done.returncode}: {done.stderr[-2000:]}{done.stdout[-500:]}")
    return answers[-1].removeprefix("ANSWER ")


ALIVE_NODES = "sum(node['Alive'] for node in ray.nodes())"


def wait_for_nodes(address: str, count: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(ClusterQueryError):  # the head may not be up yet
            if int(ask_cluster(address, ALIVE_NODES)) >= count:
                return
        time.sleep(1)
    raise TimeoutError(f"the test cluster at {address} did not reach {count} nodes")


def stop_ray_node(node: subprocess.Popen[bytes], grace_s: float = 3) -> None:
    """SIGTERM asks the node's processes to stop, SIGKILL ends what is left in its session
    after `grace_s`. `ray start --block` itself does not exit on SIGTERM (Ray 2.60), and
    its node's processes took over 30 s to stop here, so a longer grace only waits."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        node.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, signal.SIGKILL)
    node.wait(timeout=30)


@dataclass
class TwoNodes:
    address: str
    dashboard: str
    second: subprocess.Popen[bytes]
    """The second node's `ray start --block`: the leader of its processes' session."""

    def kill_second(self) -> None:
        """SIGKILL to every process of the second node at once, as a preempted machine
        gives no notice."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.second.pid, signal.SIGKILL)
        self.second.wait(timeout=30)

    def alive_nodes(self) -> int:
        return int(self._ask(ALIVE_NODES))

    def alive_on_second(self, class_name: str) -> int:
        """Live actors of `class_name` on the second node."""
        return self._alive(class_name, on_head=False)

    def alive_on_head(self, class_name: str) -> int:
        return self._alive(class_name, on_head=True)

    def _alive(self, class_name: str, on_head: bool) -> int:
        head = "in" if on_head else "not in"  # the head alone has Ray's internal head resource
        return int(
            self._ask(
                "len([a for a in list_actors(address=ADDRESS, detail=True, limit=1000, "
                f"filters=[('class_name', '=', {class_name!r}), ('state', '=', 'ALIVE')]) "
                "if a.node_id in {n['NodeID'] for n in ray.nodes() if n['Alive'] "
                f"and 'node:__internal_head__' {head} n['Resources']}}])"
            )
        )

    def _ask(self, expression: str) -> str:
        return ask_cluster(self.address, expression)

    def wait_until_second_is_dead(self, timeout_s: float = 120) -> float:
        """Seconds until the head's GCS marks the killed node dead."""
        start = time.monotonic()
        while self.alive_nodes() > 1:
            if time.monotonic() - start > timeout_s:
                raise TimeoutError(f"the killed node still counts as alive after {timeout_s} s")
            time.sleep(1)
        return time.monotonic() - start


@contextlib.contextmanager
def two_node_cluster(
    head_cpus: int, second_cpus: int, head: Sequence[str] = (), second: Sequence[str] = ()
) -> Iterator[TwoNodes]:
    """`head` and `second`: more `ray start` options for each node (e.g. `--resources`)."""
    ensure_auth_token()  # `ray start` with token auth refuses to start without one
    port, dashboard = free_port(), free_port()
    # Ray writes the address of the cluster `ray start` launched into TEMP_DIR/ray_current_cluster,
    # where `ray.init()` and the state API without an address look: a temp dir of this
    # cluster's own keeps other tests' Ray off it (short: socket paths have a length limit).
    temp_dir = tempfile.mkdtemp(prefix="rlsuite-cluster-", dir="/tmp")
    head_command = [RAY, "start", "--head", "--block", "--num-cpus", str(head_cpus)]
    head_command += ["--port", str(port), "--temp-dir", temp_dir]
    head_command += ["--dashboard-port", str(dashboard), *head]
    address = f"127.0.0.1:{port}"
    second_command = [RAY, "start", "--address", address, "--block"]
    second_command += ["--num-cpus", str(second_cpus), *second]
    nodes: list[subprocess.Popen[bytes]] = []
    try:
        nodes.append(start_ray_node(head_command))
        wait_for_nodes(address, 1)
        nodes.append(start_ray_node(second_command))
        wait_for_nodes(address, 2)
        yield TwoNodes(address, f"http://127.0.0.1:{dashboard}", nodes[1])
    finally:
        for node in reversed(nodes):
            stop_ray_node(node)  # `ray start --block` waits out any grace: see its docstring
        shutil.rmtree(temp_dir, ignore_errors=True)
