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
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import ray
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlsuite.evaluate import main as evaluate_main
from rlsuite.run import main

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
# The two checkpoints of `CARTPOLE_RUN`'s trial (conftest's `trial` copies it).
LATEST, EARLIER = "checkpoint_000001", "checkpoint_000000"
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


def reject(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    experiment: Path,
    *args: str,
    needles: tuple[str, ...],
) -> str:
    """Run `experiment` with `args` into tmp_path/results: refused (`assert_rejected`)."""
    storage = tmp_path / "results"
    code = run_main(experiment, *args, storage=storage)
    return assert_rejected(capsys, code, storage, *needles)


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


def assert_learns(config: Any, target: float, within_env_steps: int) -> None:
    """An Algorithm built from `config` reaches a mean return of `target` before it has
    sampled more than `within_env_steps` env steps (a slow learning test's check)."""
    with local_ray():
        algorithm = config.build_algo()
        try:
            best = 0.0
            while best < target:
                result = algorithm.train()
                best = max(best, result["env_runners"].get("episode_return_mean", 0.0))
                assert result["num_env_steps_sampled_lifetime"] <= within_env_steps, best
        finally:
            algorithm.stop()


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
