"""`python -m rlsuite.serve` behind its flags: find the checkpoint, restore it once here
(so a path with no checkpoint, or one that cannot be restored, is one line before Serve
starts), then deploy it on Ray Serve and serve until Ctrl-C (or SIGTERM).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlsuite.errors import ServeStartFailed, UsageError
from rlsuite.evaluation.damage import DamagedCheckpointError, check_intact, restoring
from rlsuite.evaluation.locate import Target, is_supervised_checkpoint, locate
from rlsuite.launcher.cluster import (
    check_reachable,
    cluster_runtime_env,
    ensure_auth_token,
    unshared,
)
from rlsuite.launcher.console import (
    DRIVER_LOG,
    RAY_LOGS,
    copy_ray_logs,
    held_output,
    keep_log,
    ray_logs_source,
    ray_output_to,
    terminal,
)
from rlsuite.outputs import check_output_dir
from rlsuite.serving import haproxy
from rlsuite.serving.app import Model, build
from rlsuite.serving.options import ServeOptions
from rlsuite.serving.startup import deploy, local_address, proxy_failure
from rlsuite.serving.stop_signals import StopSignals

APP_NAME = "rlsuite"


def serve(options: ServeOptions) -> None:
    """Serve the checkpoint `options.path` stands for until Ctrl-C."""
    check_address(options.host, options.port, on_cluster=bool(options.address))
    if options.logs_dir is not None:  # unwritable, Ray's and the replicas' output was lost
        check_output_dir(options.logs_dir, "--logs-dir")
    if options.proxy == "haproxy" and options.address:
        raise UsageError(
            "--proxy haproxy starts HAProxy with this server's own Ray; on a cluster, start "
            "its nodes with RAY_SERVE_ENABLE_HA_PROXY=1 and drop --proxy"
        )
    if options.proxy == "haproxy":
        haproxy.check_binary()
    if options.address:  # before ray.init, which retries an address for minutes
        with held_output():  # Ray's C++ warnings from the token probe
            check_reachable(options.address)
    target = locate(options.path, options.trial, options.checkpoint)
    logs_dir = options.logs_dir or Path(tempfile.mkdtemp(prefix="rlsuite-serve-"))
    try:
        with restoring(target.checkpoint):
            model = prepare(options, target, logs_dir)
        if not options.address:
            import torch  # loaded with the model already

            machine = {"CPU": float(os.cpu_count() or 1), "GPU": float(torch.cuda.device_count())}
            check_room(options, machine, "this machine")
        ports = haproxy.ports_for(options.proxy, options.port)
    except (DamagedCheckpointError, UsageError) as error:
        if options.logs_dir is None:  # a refusal leaves nothing behind
            shutil.rmtree(logs_dir, ignore_errors=True)
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:  # Ctrl-C while the model loads: nothing left behind either
        if options.logs_dir is None:
            shutil.rmtree(logs_dir, ignore_errors=True)
        raise
    # HAProxy's settings reach Serve through the environment its Ray inherits.
    with haproxy.for_proxy(ports, logs_dir):
        _run(options, target, model, logs_dir)


def prepare(options: ServeOptions, target: Target, logs_dir: Path) -> Model:
    """What the replicas load, restored once here; UsageError for what cannot be served."""
    check_intact(target.checkpoint)
    if is_supervised_checkpoint(target.checkpoint):
        for given, flag in (
            (options.explore, "--explore"),
            (options.backend == "onnx", "--backend onnx"),
        ):
            if given:
                raise UsageError(f"{flag} does not apply to a classifier checkpoint; drop it")
        import torch

        from rlsuite.serving import classifiers

        classifiers.load(target.checkpoint, torch.device("cpu"))  # restorable? (replicas load it)
        return Model(target.checkpoint, "supervised")
    from rlsuite.serving.policies import ServedPolicy

    served = ServedPolicy(target.checkpoint, options.explore)
    # Serve's router spreads a session's requests over the replicas; this state is in one.
    if served.session_state and options.replicas > 1:
        raise UsageError(
            f"the policy keeps state from step to step of a session ({', '.join(served.session_state)}), and a session lives in one replica; serve it with --replicas 1"
        )
    if options.backend == "onnx":
        from rlsuite.serving.onnx_policy import export_checked

        path = export_checked(served, logs_dir, options.explore)
        space = served.observation_space
        return Model(target.checkpoint, "onnx", onnx_file=path, observation_space=space)
    return Model(target.checkpoint, "rl", explore=options.explore)


def _run(options: ServeOptions, target: Target, model: Model, logs_dir: Path) -> None:
    import ray
    from ray import serve
    from ray.exceptions import RayError
    from ray.serve.config import HTTPOptions

    from rlsuite.launcher.tuner import ACTOR_ENV_VARS  # Tune's import: only when serving

    stop = threading.Event()
    started = False  # Serve, by this server: only then is Serve this server's to shut down
    stop_signals = StopSignals()
    with ray_output_to(logs_dir):
        out = terminal()
        print(
            f"rlsuite.serve: Ray's and Serve's output goes to {logs_dir / DRIVER_LOG}, the replicas' logs (one line per refused request{', and per request' if options.access_log else ''}) to {logs_dir / RAY_LOGS / 'serve'} on exit",
            file=out,
        )
        try:
            # On a cluster the replicas' nodes get the suite's code as the launcher's trials do.
            runtime_env = cluster_runtime_env(ACTOR_ENV_VARS) if options.address else None
            if not options.address:
                ensure_auth_token()
            stop_signals.keep_through_shutdown()
            ray.init(
                # "local": a Ray of our own even where `ray start` or RAY_ADDRESS names a
                # cluster (plain ray.init() would join it, and refuse num_cpus there).
                address=options.address or "local",
                # As many CPUs as check_room counted (Ray's own count can differ in a container).
                num_cpus=None if options.address else os.cpu_count(),
                runtime_env=runtime_env,
                log_to_driver=False,
                configure_logging=False,
            )
            if options.address:
                check_checkpoint_shared(target.checkpoint)
                check_no_serve_running(options.address, serve.status())
                check_room(options, ray.cluster_resources(), "the cluster")
            # Ray is up and the checks passed: from here --logs-dir exists, so the replicas'
            # logs are copied into it on exit (also when the replicas fail to start).
            keep_log()
            stop_signals.arm()
            # A local Ray's logs are copied into logs_dir on exit; a cluster keeps its own,
            # and its proxies may listen on other hosts (so the route is not probed here).
            cluster_logs = "serve/ of the head node's Ray logs (`ray logs cluster`)"
            serve_logs = cluster_logs if options.address else str(logs_dir / RAY_LOGS / "serve")
            started = True  # Serve is this server's from here, also where its start fails
            try:
                serve.start(http_options=HTTPOptions(host=options.host, port=options.port))
            except RayError as error:  # e.g. HAProxy exited: a port it binds was taken
                haproxy_logs = (
                    f", HAProxy's: {logs_dir}/haproxy-*.log" if options.proxy == "haproxy" else ""
                )
                raise ServeStartFailed(
                    f"Serve did not start: {proxy_failure(error)} (Serve's logs: {serve_logs}{haproxy_logs})"
                ) from None
            app = build(
                model,
                options.replicas,
                options.num_cpus,
                options.num_gpus,
                options.max_batch_size,
                options.batch_wait_ms / 1000,
                options.access_log,
            )
            health = None if options.address else local_address(options.host, options.port)
            deploy(app, APP_NAME, options.start_timeout_s, serve_logs, health)
            loaded = model.kind if model.kind != "supervised" else "classifier"
            print(
                f"serving {target.checkpoint} ({loaded}, {options.replicas} replica(s), {options.proxy} proxy) at http://{_url_host(options.host)}:{options.port}: POST {_route(model)}, GET /healthz, GET /ready; Ctrl-C stops",
                file=out,
            )
            stop.wait()
        except KeyboardInterrupt:
            print("rlsuite.serve: stopping", file=out)
        finally:
            stop_signals.hold()
            if options.address is not None and started:
                # On a cluster the app must go; an embedded Ray takes Serve's actors down
                # with it (with serve.shutdown() first, a loaded test run's server had not
                # ended 90 s after Ctrl-C).
                with contextlib.suppress(Exception):
                    serve.shutdown()
            ray_logs = ray_logs_source()
            ray.shutdown()
            # After the shutdown: a replica writes a request's access line after its answer
            # went out, and a copy taken before had missed the last one (CI, loaded).
            copy_ray_logs(logs_dir, ray_logs)  # the replicas' logs, one line per refused request
            stop_signals.release()
        print("rlsuite.serve: stopped", file=out)


def check_checkpoint_shared(checkpoint: Path) -> None:
    """The replicas load the checkpoint from its path on their own nodes: on a cluster of
    several hosts that path must be on storage they all mount."""
    problem = unshared(str(checkpoint))
    if problem:
        raise UsageError(
            f"checkpoint {checkpoint} {problem}, where the replicas cannot read it; put the results on a file system every node mounts at the same path (NFS)"
        )


def check_no_serve_running(address: str, status: Any) -> None:
    """Serve already running on the cluster (`serve.status()`: its proxies or apps) would
    keep its own proxy address, ignoring --host and --port with no more than a warning in
    its log, and this server's exit would shut Serve down with every app on it."""
    if status.proxies or status.applications:
        apps = ", ".join(sorted(status.applications)) or "none"
        raise UsageError(
            f"Ray Serve already runs on the cluster at {address} (applications: {apps}); rlsuite.serve starts Serve and shuts it down on exit: use a cluster without Serve, or stop it first (`serve shutdown -y` on the head node)"
        )


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host  # an IPv6 address in a URL


def _route(model: Model) -> str:
    return "/predict" if model.kind == "supervised" else "/act"


def check_room(options: ServeOptions, total: Mapping[str, float], where: str) -> None:
    """Replicas that Ray can never place would keep `serve.run` waiting for ever (it waits
    for every replica to start, saying nothing): refuse them in one line."""
    for name, each, flag in (
        ("CPU", options.num_cpus, "--num-cpus"),
        ("GPU", options.num_gpus, "--num-gpus"),
    ):
        need, has = options.replicas * each, total.get(name, 0.0)
        if need > has + 1e-9:
            elsewhere = "" if options.address else ", or deploy on a cluster with --address"
            raise UsageError(
                f"--replicas {options.replicas} with {flag} {each:g} need {need:g} {name}{'' if need == 1 else 's'} but {where} has {has:g}; lower --replicas or {flag}{elsewhere}"
            )


def check_address(host: str, port: int, on_cluster: bool) -> None:
    """Refuse a host and port the HTTP proxy could not listen on, before Ray starts. The
    probe binds as Serve's proxy does: with SO_REUSEADDR (a port whose last server's
    connections wait out TIME_WAIT is free to it), an IPv4 address where the host has one,
    else IPv6 (`--host ::1`). On a cluster the proxies listen on its nodes, not here: the
    host must only resolve."""
    try:
        found = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, UnicodeError) as error:  # UnicodeError: a label over 63 characters
        reason = error.strerror if isinstance(error, socket.gaierror) else "not a valid name"
        raise UsageError(
            f"--host {host}: not a host name or address ({reason}); give one without a port, e.g. --host 0.0.0.0"
        ) from None
    if on_cluster:
        return
    family, kind, proto, _, address = min(found, key=lambda info: info[0] != socket.AF_INET)
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            port_taken = error.errno in (errno.EADDRINUSE, errno.EACCES)
            fix = "choose another --port" if port_taken else "check --host"
            raise UsageError(
                f"--host {host} --port {port}: cannot listen there ({error.strerror}); {fix}"
            ) from None
