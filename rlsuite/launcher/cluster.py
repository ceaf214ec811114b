"""Joining a Ray cluster: ship the project's code, check resources and storage first.

Every check here runs after connecting and before Tune starts a trial, so a run that
cannot fit fails in a second with the missing resource named, instead of pending forever.
"""

from __future__ import annotations

import os
import secrets
import socket
import tempfile
from pathlib import Path
from typing import Any

import ray

import rlsuite
from rlsuite.errors import UsageError

# File systems that every node of a cluster can mount at the same path.
SHARED_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "lustre", "gpfs", "ceph", "glusterfs", "beegfs", "9p"}
)


def cluster_runtime_env(env_vars: dict[str, str], setup_hook: str | None = None) -> dict[str, Any]:
    """Ray runtime env for a cluster: the `rlsuite` package (its env registry included)
    travels with the job, so a node that never saw this repository builds the envs and
    runs the callbacks. (Experiment files travel inside the pickled config; see loader.)"""
    runtime_env: dict[str, Any] = {"env_vars": env_vars, "py_modules": [rlsuite]}
    if setup_hook:
        runtime_env["worker_process_setup_hook"] = setup_hook
    return runtime_env


def ensure_auth_token() -> None:
    """Create Ray's token file (~/.ray/auth_token) if token authentication needs one and
    none exists, so that Ray finds one and does not write its own.

    Why not leave it to Ray 2.60: a local `ray.init()` that finds no token writes one with
    a plain `open("w")`, so two runs starting at once on a new machine can each write a
    different token, and the Ray whose token was overwritten cannot be joined; `ray start`
    with RAY_AUTH_MODE=token refuses to start at all without the file. A hard link
    publishes the file whole, and only if it is still missing."""
    if os.environ.get("RAY_AUTH_MODE", "token").lower() != "token":
        return
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return
    path = Path.home() / ".ray" / "auth_token"
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", dir=path.parent, prefix=".auth_token.", delete=False
    ) as draft:
        draft.write(secrets.token_hex(32))  # as Ray's own generator: 256 random bits
    try:
        os.link(draft.name, path)
    except FileExistsError:
        pass  # another process published its token first: Ray reads that one
    finally:
        os.unlink(draft.name)


def connect(
    address: str, env_vars: dict[str, str], setup_hook: str, log_to_driver: bool = True
) -> None:
    try:
        ray.init(
            address=address,
            runtime_env=cluster_runtime_env(env_vars, setup_hook),
            log_to_driver=log_to_driver,
        )
    except (ConnectionError, RuntimeError) as error:
        reason = str(error).strip().splitlines()[0]
        raise UsageError(
            f"--address {address}: cannot join the Ray cluster ({reason}){_token_hint()}"
        ) from None


def _token_hint() -> str:
    if os.environ.get("RAY_AUTH_MODE") == "token":
        return "; check that the token is the cluster's (~/.ray/auth_token or RAY_AUTH_TOKEN)"
    # Ray reads RAY_AUTH_MODE when it is imported: it must come from the shell.
    return "; clusters started by `ray start` use token authentication: export RAY_AUTH_MODE=token (the token is read from ~/.ray/auth_token or RAY_AUTH_TOKEN)"


# How long an address may take to answer: Ray itself retries an unreachable GCS for
# minutes, printing its own log lines, before it gives up.
CONNECT_TIMEOUT_S = 5.0


def check_reachable(address: str) -> None:
    """Something listens at the cluster's address (host:port, ray://host:port, or `auto`'s
    address file); UsageError in seconds otherwise."""
    resolved = _resolved(address)
    if resolved is None:
        return  # `auto` with no cluster on this machine: ray.init says so at once
    host, port = _host_port(address, resolved)
    try:  # an IPv6 host comes in brackets, as Ray writes it
        with socket.create_connection((host.strip("[]"), port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        raise UsageError(
            f"--address {address}: nothing answers at {host}:{port} ({error.strerror or error}); "
            "start the cluster (`ray start --head`) or pass its head's address"
        ) from None
    if not resolved.startswith("ray://"):  # Ray Client's server is not the GCS
        _check_token(address, f"{host}:{port}")


def _check_token(address: str, gcs_address: str) -> None:
    """The cluster takes this client's token. ray.init retries a refused token for 20 s,
    printing a warning a second, before it gives up; Ray's GCS client asked once answers
    in under a second. Only where a gRPC server answers within seconds (Ray's GCS client
    waits 30 s on a port that speaks something else). Private API (ray._raylet), hence any
    other failure leaves the verdict to ray.init."""
    try:
        import grpc
        from ray._raylet import GcsClient  # type: ignore[attr-defined]
        from ray.exceptions import AuthenticationError
    except ImportError:
        return
    channel = grpc.insecure_channel(gcs_address)
    try:
        grpc.channel_ready_future(channel).result(timeout=CONNECT_TIMEOUT_S)
    except grpc.FutureTimeoutError:
        return
    finally:
        channel.close()
    try:
        GcsClient(address=gcs_address)
    except AuthenticationError:
        raise UsageError(
            f"--address {address}: the cluster refused this client's token{_token_hint()}"
        ) from None
    except Exception:
        return


def _resolved(address: str) -> str | None:
    """The address ray.init will join: `auto` resolved as Ray does (RAY_ADDRESS, which may
    be a ray:// one, or the address file of the last `ray start`), None without one."""
    if address != "auto":
        return address
    try:  # private, hence guarded
        from ray._private.services import canonicalize_bootstrap_address

        return canonicalize_bootstrap_address("auto") or None
    except Exception:
        return None


def _host_port(address: str, resolved: str) -> tuple[str, int]:
    host, _, port = resolved.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--address {address}: expected HOST:PORT, ray://HOST:PORT or auto")
    return host, int(port)


def check_resources(
    needed: dict[str, float],
    available: dict[str, float],
    flags: str,
) -> None:
    """UsageError naming each resource a single trial needs beyond the cluster's total;
    `flags`: the workload's that size a trial (`Workload.scaling_flags`)."""
    missing = [
        f"{amount:g} {name} (cluster has {available.get(name, 0.0):g})"
        for name, amount in sorted(needed.items())
        if amount > available.get(name, 0.0) + 1e-9
    ]
    if missing:
        raise UsageError(
            "one trial needs more than the cluster has: "
            + ", ".join(missing)
            + f"; lower {flags} or add nodes"
        )


def check_bundles_fit(bundles: list[dict[str, float]], nodes: list[dict[str, float]]) -> None:
    """UsageError for an actor of a trial that no single node can hold: its placement
    group would never be placed, and Tune would keep the trial pending without an end
    (the totals can fit where each node is too small: 2 GPUs a learner on 1-GPU nodes)."""
    for bundle in bundles:
        wanted = {name: amount for name, amount in bundle.items() if amount > 0}
        if not nodes or any(_holds(node, wanted) for node in nodes):
            continue
        largest = max(nodes, key=lambda node: [node.get(name, 0.0) for name in sorted(wanted)])
        raise UsageError(
            f"one actor of a trial needs {_amounts(wanted, wanted)} on one node, and no node "
            f"has that (the largest: {_amounts(wanted, largest)}); lower what one actor asks "
            "for (the --num-*-per-* flags, resources.num_cpus_for_main_process, or a "
            "supervised config's cpus_per_worker) or add larger nodes"
        )


def _holds(node: dict[str, float], wanted: dict[str, float]) -> bool:
    return all(node.get(name, 0.0) + 1e-9 >= amount for name, amount in wanted.items())


def _amounts(names: dict[str, float], resources: dict[str, float]) -> str:
    return ", ".join(f"{resources.get(name, 0.0):g} {name}" for name in sorted(names))


def alive_nodes() -> list[dict[str, float]]:
    """Each live node's resources, as Ray counts them."""
    return [dict(node["Resources"]) for node in ray.nodes() if node["Alive"]]


def check_shared_storage(storage_path: str) -> None:
    """On a cluster spanning several hosts, results must go where every node can write."""
    problem = unshared(storage_path)
    if problem:
        raise UsageError(
            f"--storage-path {storage_path} {problem}; use a file system every node mounts at the same path (NFS, EFS, Lustre)"
        )


def unshared(path: str) -> str | None:
    """Why the connected cluster's other hosts cannot reach `path`, or None where they can
    (a shared file system, or a cluster on one host)."""
    hosts = {node["NodeManagerAddress"] for node in ray.nodes() if node["Alive"]}
    if len(hosts) <= 1:
        return None  # one host: its local disk is shared by all its nodes
    fstype = filesystem_type(Path(path))
    if fstype in SHARED_FILESYSTEMS:
        return None
    return f"is on this machine's {fstype or 'local'} disk but the cluster spans {len(hosts)} hosts"


def filesystem_type(path: Path) -> str | None:
    """The type of the file system holding `path`, from /proc/mounts (Linux)."""
    path = path.absolute()
    while not path.exists():
        path = path.parent
    best, fstype = "", None
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        if len(fields) >= 3 and _under(path, fields[1]) and len(fields[1]) > len(best):
            best, fstype = fields[1], fields[2]
    return fstype


def _under(path: Path, mount_point: str) -> bool:
    return path == Path(mount_point) or Path(mount_point) in path.parents
