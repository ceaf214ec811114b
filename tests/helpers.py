"""What tests share that is not a fixture: the repository's paths, the real CLI in a
subprocess or in this process, the one check for every refusal, what a run left behind.

Fixtures and pytest hooks live in tests/conftest.py; tests import these by name
(`from tests.helpers import ROOT, run_cli`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import ray
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlsuite.evaluate import main as evaluate_main
from rlsuite.launcher.cluster import ensure_auth_token
from rlsuite.run import main
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = sorted(p for p in (ROOT / "experiments").glob("*.py") if p.name != "__init__.py")
# By what the file configures: supervised configs are SupervisedConfig, RL ones RLlib's.
SUPERVISED_EXPERIMENTS = [p for p in EXPERIMENTS if "SupervisedConfig(" in p.read_text()]
RL_EXPERIMENTS = [p for p in EXPERIMENTS if p not in SUPERVISED_EXPERIMENTS]
TENSORBOARD_PREFIX = "ray/tune/"  # Tune's TensorBoard logger puts results under it

RAY = str(Path(sys.executable).with_name("ray"))
# `ray start` clusters use token authentication (Ray 2.60); the token is in ~/.ray/auth_token.
TOKEN_ENV = {**os.environ, "RAY_AUTH_MODE": "token"}
CARTPOLE_RUN = "cartpole"
"""conftest's `cartpole_run`: its results folder's name, and the flags it was made with."""
CARTPOLE_RUN_FLAGS = ("--smoke", "--name", CARTPOLE_RUN, "--seed", "0")


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    storage: Path

    def summary(self, name: str) -> dict:
        return json.loads((self.storage / name / "summary.json").read_text())


def run_cli(
    *args: str | Path,
    storage: Path,
    timeout: float = 600,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
) -> CliRun:
    """`python -m rlsuite.run ARGS --storage-path STORAGE` in `cwd`, as a user runs it."""
    command = [sys.executable, "-m", "rlsuite.run", *map(str, args), "--storage-path", str(storage)]
    env = {**(env or os.environ), "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env
    )
    return CliRun(done.returncode, done.stdout, done.stderr, storage)


def run_script(
    script: str, *args: str | Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -c SCRIPT ARGS...` from the repository root, in a process of its own (Ray
    started there ends with it)."""
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def user_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default this process's environment) as a user's shell has it: without a
    PYTHONPATH. pytest puts the repository root on sys.path (pyproject's `pythonpath`),
    where the top-level `envs/` folder would import under its folder name."""
    env = {**(base or os.environ), "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONPATH", None)
    return env


def users_own_envs_package(folder: Path) -> Path:
    """`folder`, created as a user's working directory holding an `envs/` package of their
    own: first on sys.path in the driver and in Ray's workers, it once ended runs in
    `AttributeError: module 'envs' has no attribute 'UnknownEnvError'`."""
    users = folder / "envs"
    users.mkdir(parents=True)
    (users / "__init__.py").write_text('"""A user\'s own envs."""\n\nMY_ENVS = ["gridworld"]\n')
    return folder


def smoke_trials(
    path: Path, storage: Path, *flags: str, env: dict[str, str] | None = None
) -> list[dict]:
    """`--smoke` of an experiment file through the CLI: its summary's trials, all OK."""
    run = run_cli(path, "--smoke", *flags, storage=storage, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    trials: list[dict] = run.summary(path.stem)["trials"]
    assert trials and all(t["status"] == "OK" for t in trials)
    return trials


# Bad-input helpers: the CLI in this process, for speed; tests/test_bad_input.py also
# checks a real process.
def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def printed_file(experiment_dir: Path) -> Path:
    """Where conftest keeps what a shared run printed, piped (stdout, then stderr)."""
    return experiment_dir.parent / f"{experiment_dir.name}.printed"


def run_main(*args: str | Path, storage: Path) -> int:
    try:
        return main([*map(str, args), "--storage-path", str(storage)])
    except SystemExit as exit:  # argparse's own errors
        return int(exit.code or 0)


def assert_rejected(
    capsys: pytest.CaptureFixture[str], code: int, storage: Path, *needles: str
) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not storage.exists(), "bad input must not create the results directory"
    return lines[0]


def tensorboard_scalars(trial_dir: Path) -> set[str]:
    events = list(trial_dir.glob("events.out.tfevents.*"))
    assert events, f"no TensorBoard event file in {trial_dir}"
    accumulator = EventAccumulator(str(events[0]))
    accumulator.Reload()
    return set(accumulator.Tags()["scalars"])


def evaluate_in_process(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    """`rlsuite.evaluate.main` here: exit code (argparse's too) and stderr."""
    try:
        code = evaluate_main([str(a) for a in args])
    except SystemExit as exit:
        code = int(exit.code or 0)
    return code, capsys.readouterr().err


@contextlib.contextmanager
def local_ray() -> Iterator[None]:
    """A Ray of this test process's own. An Algorithm built here would otherwise start
    Ray with `ray.init()`, which joins the cluster in Ray's address file: whichever
    `ray start` last ran on this machine (test_cluster's, maybe gone by now)."""
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", include_dashboard=False)
    try:
        yield
    finally:
        if started:
            ray.shutdown()


@dataclass(frozen=True)
class SupervisedSweep:
    """conftest's `cifar_sweep` and `sst2_sweep`: an experiment's smoke sweep on files the
    tests wrote in its data set's format."""

    MLFLOW_EXPERIMENT = "supervised-test"

    experiment_dir: Path
    data: Path
    mlflow_uri: str | None = None

    def trials(self) -> list[dict[str, Any]]:
        trials: list[dict[str, Any]] = json.loads(
            (self.experiment_dir / "summary.json").read_text()
        )["trials"]
        return trials


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


def digest(directory: Path) -> dict[str, str]:
    """Every file under `directory` by its SHA-256: what a run left, to compare byte for byte."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def nested(flat: dict[str, Any]) -> dict[str, Any]:
    """A result nested as Tune reports it: `env_runners/x` is `{"env_runners": {"x": ...}}`."""
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = str(key).split("/")
        node = tree
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return tree
