"""Shared fixtures: run the real CLI in a subprocess, read what it left behind."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import ray
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rlsuite.evaluate import main as evaluate_main
from rlsuite.run import main
from rlsuite.supervised.text_data import synthetic_text
from tests.supervised_data import write_sst2

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = sorted(p for p in (ROOT / "experiments").glob("*.py") if p.name != "__init__.py")
# By what the file configures: supervised configs are SupervisedConfig, RL ones RLlib's.
SUPERVISED_EXPERIMENTS = [p for p in EXPERIMENTS if "SupervisedConfig(" in p.read_text()]
RL_EXPERIMENTS = [p for p in EXPERIMENTS if p not in SUPERVISED_EXPERIMENTS]


# The longest test files first (seconds from `pytest --durations=0` on 2 vCPUs: 634, 424,
# 285, ...). pytest-xdist hands whole files to its two workers in this order (with
# `--no-loadscope-reorder`; by default it puts files with more tests first), and a long
# file last would leave one worker running it alone at the end.
LONGEST_FIRST = (
    "test_experiments.py",
    "test_experiments_supervised.py",
    "test_supervised_runs.py",
    "test_sweep_resume.py",
    "test_pbt.py",
    "test_cluster.py",
    "test_report.py",
    "test_evaluate.py",
    "test_supervised_text.py",
    "test_resume.py",
    "test_export.py",
    "test_evaluate_multiagent.py",
    "test_selfplay.py",
    "test_bad_input.py",
    "test_seeds.py",
    "test_bench_throughput.py",
    "test_learning.py",
    "test_mixed_precision.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order inside a file stays


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    storage: Path

    def summary(self, name: str) -> dict:
        return json.loads((self.storage / name / "summary.json").read_text())


def run_cli(
    *args: str | Path, storage: Path, timeout: float = 600, env: dict[str, str] | None = None
) -> CliRun:
    """`python -m rlsuite.run ARGS --storage-path STORAGE`, as a user runs it."""
    command = [sys.executable, "-m", "rlsuite.run", *map(str, args), "--storage-path", str(storage)]
    env = {**(env or os.environ), "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env
    )
    return CliRun(done.returncode, done.stdout, done.stderr, storage)


def smoke_trials(path: Path, storage: Path) -> list[dict]:
    """`--smoke` of an experiment file through the CLI: its summary's trials, all OK."""
    run = run_cli(path, "--smoke", storage=storage)
    assert run.returncode == 0, run.stderr[-3000:]
    trials: list[dict] = run.summary(path.stem)["trials"]
    assert trials and all(t["status"] == "OK" for t in trials)
    return trials


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    return tmp_path / "results"


# Bad-input helpers: the CLI in this process, for speed; tests/test_bad_input.py also
# checks a real process.
def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


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


TENSORBOARD_PREFIX = "ray/tune/"  # Tune's TensorBoard logger puts results under it


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


@pytest.fixture
def sst2_dir(tmp_path: Path) -> Path:
    data = synthetic_text(num_train=64, num_validation=32, seed=1)
    return write_sst2(tmp_path / "SST-2", data.train, data.validation)
