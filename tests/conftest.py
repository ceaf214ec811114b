"""Fixtures and hooks. What tests share otherwise (paths, the CLI runners, the refusal
check) is in tests/helpers.py.

Test files run longest first. pytest-xdist hands whole files to its two workers in
collection order (`--dist loadfile --no-loadscope-reorder` in pyproject's addopts), and a
long file handed out last would leave one worker running it alone at the end. How long
each file takes is measured, not typed: tests/durations.json holds seconds per file
(setup, call and teardown of its tests summed), and a run with `--record-durations`
rewrites the entries of the files it ran:

    pytest --record-durations            # the whole suite, as CI runs it
    pytest --record-durations -n 0 tests/test_pbt.py   # one file after changing it

Record from runs of whole files: a file run with `-k` would be recorded short. Files
with no entry yet (a new test file) go first, since an unknown file may be long and a
short one costs nothing at the start; only the tail of the order decides when the
suite ends.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rlsuite.supervised.text_data import synthetic_text
from tests.helpers import (
    CARTPOLE_RUN,
    EARLIER,
    LATEST,
    ROOT,
    SupervisedSweep,
    printed_file,
    run_cli,
)
from tests.ray_nodes import RayCluster, ray_head
from tests.supervised_data import write_cifar, write_sst2

DURATIONS = ROOT / "tests" / "durations.json"
RECORDED = "recorded"
"""Seconds measured by `--record-durations`."""
ESTIMATED = "estimated"
"""Seconds not measured yet, kept until a recorded entry replaces them: the order of the
hand-written list this file replaced, with the seconds its comment gave for the first
three (634, 424, 285 from `pytest --durations=0` on 2 vCPUs) and evenly spaced
placeholders from 250 s down to 30 s for the rest."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help=f"write each test file's seconds into {DURATIONS.relative_to(ROOT)}",
    )


def read_durations() -> dict[str, dict[str, float]]:
    data: dict[str, dict[str, float]] = json.loads(DURATIONS.read_text())
    return data


def file_seconds(durations: dict[str, dict[str, float]]) -> dict[str, float]:
    """Seconds per test file (`tests/test_x.py`), recorded ones over estimates."""
    return {**durations.get(ESTIMATED, {}), **durations.get(RECORDED, {})}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seconds = file_seconds(read_durations())

    def rank(item: pytest.Item) -> tuple[bool, float]:
        known = seconds.get(_file_of(item.nodeid))
        return (known is not None, -(known or 0.0))

    items.sort(key=rank)  # stable: the order inside a file stays


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


_measured: defaultdict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Under pytest-xdist the controller sees every worker's reports here too."""
    _measured[_file_of(report.nodeid)] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if not config.getoption("record_durations") or hasattr(config, "workerinput"):
        return  # an xdist worker: its controller writes
    before = read_durations()
    recorded = {**before.get(RECORDED, {}), **_measured}
    estimated = {k: v for k, v in before.get(ESTIMATED, {}).items() if k not in recorded}
    after = {RECORDED: _longest_first(recorded)}
    if estimated:
        after[ESTIMATED] = _longest_first(estimated)
    DURATIONS.write_text(json.dumps(after, indent=2) + "\n")


def _longest_first(seconds: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 1) for k, v in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))}


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    return tmp_path / "results"


@pytest.fixture
def sst2_dir(tmp_path: Path) -> Path:
    data = synthetic_text(num_train=64, num_validation=32, seed=1)
    return write_sst2(tmp_path / "SST-2", data.train, data.validation)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    """One Ray for a test file's runs that join it with `--address` instead of starting
    their own Ray each (start-up and shutdown are about half of a smoke run on 2 vCPUs),
    with as many CPUs as a run's own Ray would have on this machine. Module-scoped: it
    stops when the file's tests end, rather than idling beside the files that follow."""
    with ray_head(max(2, os.cpu_count() or 1)) as cluster:
        yield cluster


CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"
MADDPG_TAG = ROOT / "experiments" / "maddpg_tag.py"
SHARED_SPREAD = ROOT / "experiments" / "ppo_shared_spread.py"
CIFAR = ROOT / "experiments" / "resnet_cifar10.py"
SST2 = ROOT / "experiments" / "bert_sst2.py"


@pytest.fixture(scope="session")
def cartpole_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One smoke PPO CartPole run (seed 0, 50-step episodes, two checkpoints) for the
    whole session. Tests only read it; a test that changes files works on a copy."""
    return _shared_run(tmp_path_factory, CARTPOLE, CARTPOLE_RUN, "--seed", "0")


@pytest.fixture
def finished_run(cartpole_run: Path, tmp_path: Path) -> Path:
    """A results folder holding a copy of `cartpole_run` (CARTPOLE_RUN_FLAGS), for tests
    that change what they get."""
    storage = tmp_path / "finished"
    shutil.copytree(cartpole_run, storage / CARTPOLE_RUN)
    return storage


@pytest.fixture(scope="session")
def cartpole_seeds_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A smoke PPO CartPole run over seeds 0 and 1 with `--quiet` (test_console reads what
    it printed): one results directory, two trials; read only, as `cartpole_run`."""
    flags = ("--seeds", "2", "--quiet")
    return _shared_run(tmp_path_factory, CARTPOLE, "ppo", *flags)  # test_report's row name


@pytest.fixture(scope="session")
def maddpg_tag_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One smoke run of maddpg_tag.py (seed 0, 50-step episodes) with an env runner actor
    (MADDPG's joint env and its logged returns crossing processes) and `--verbose`
    (test_console reads what it printed); read only."""
    flags = ("--seed", "0", "--num-env-runners", "1", "--verbose")
    return _shared_run(tmp_path_factory, MADDPG_TAG, "maddpg_tag", *flags)


@pytest.fixture(scope="session")
def spread_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One smoke run of ppo_shared_spread.py (seed 0, 50-step episodes) with an env runner
    actor (the suite's multi-agent env runner class as a remote actor: episodes and weights
    crossing processes); read only. For the smoke matrix and the multi-agent evaluate tests."""
    flags = ("--seed", "0", "--num-env-runners", "1")
    return _shared_run(tmp_path_factory, SHARED_SPREAD, "spread", *flags)


@pytest.fixture(scope="session")
def cifar_sweep(tmp_path_factory: pytest.TempPathFactory) -> SupervisedSweep:
    """resnet_cifar10.py's smoke sweep (two trials of two epochs) on a tiny CIFAR-10
    directory, sent to MLflow (a SQLite store) too; read only. One run for the smoke
    matrix, a supervised sweep's tracking, CIFAR loading and evaluation (CI time)."""
    shared = _shared_dir(tmp_path_factory)
    data = shared / "cifar_data" / "cifar-10-batches-py"
    uri = f"sqlite:///{shared / 'cifar_mlflow.db'}"
    experiment_dir = _shared_run(
        tmp_path_factory,
        CIFAR,
        "cifar",
        *("--set", "dataset=cifar10", "--set", f"data_path={data}", "--set", "image_size=32"),
        *("--mlflow", uri, "--mlflow-experiment", SupervisedSweep.MLFLOW_EXPERIMENT),
        write_inputs=lambda: write_cifar(data, per_batch=8),
    )
    return SupervisedSweep(experiment_dir, data, uri)


@pytest.fixture(scope="session")
def sst2_sweep(tmp_path_factory: pytest.TempPathFactory) -> SupervisedSweep:
    """bert_sst2.py's smoke run as one trial (`--num-samples 1`) of two epochs, a tiny
    BERT, on SST-2-style files; read only. For the smoke matrix, the text tests' restore
    checks and serving. One trial: a smoke sweep of two is `cifar_sweep`'s, and a second
    BERT trial took ~40 s of CI."""
    data = _shared_dir(tmp_path_factory) / "sst2_data" / "SST-2"

    def write_data() -> None:
        sentences = synthetic_text(num_train=64, num_validation=32, seed=1)
        write_sst2(data, sentences.train, sentences.validation)

    flags = ("--set", "dataset=sst2", "--set", f"data_path={data}", "--num-samples", "1")
    experiment_dir = _shared_run(tmp_path_factory, SST2, "sst2", *flags, write_inputs=write_data)
    return SupervisedSweep(experiment_dir, data)


def _shared_dir(factory: pytest.TempPathFactory) -> Path:
    """The session's temporary directory that every pytest-xdist worker sees."""
    shared = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # pytest-N/, above this worker's popen-gwK/
    return shared


def _shared_run(
    factory: pytest.TempPathFactory,
    experiment: Path,
    name: str,
    *flags: str,
    write_inputs: Callable[[], object] | None = None,
) -> Path:
    """`EXPERIMENT --smoke FLAGS --name NAME`, trained once per session (after
    `write_inputs()`, when given), what it printed kept (`printed_file`): under pytest-xdist
    the first worker to ask trains it under a file lock in the session's common temporary
    directory and the others read it (xdist's documented way to share a session fixture)."""
    storage = _shared_dir(factory) / "shared_runs"
    storage.mkdir(exist_ok=True)
    with open(storage / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (storage / name / "summary.json").exists():
            if write_inputs:
                write_inputs()
            run = run_cli(experiment, "--smoke", *flags, "--name", name, storage=storage)
            assert run.returncode == 0, run.stderr[-2000:]
            printed_file(storage / name).write_text(run.stdout + run.stderr)
    return storage / name


@pytest.fixture(scope="module")
def trained_trial(cartpole_run: Path) -> Path:
    """conftest's smoke PPO CartPole trial with two checkpoints; tests damage copies of it."""
    (trial,) = (p for p in cartpole_run.iterdir() if (p / "params.json").exists())
    assert sorted(p.name for p in trial.glob("checkpoint_*")) == [EARLIER, LATEST]
    return trial


@pytest.fixture
def trial(trained_trial: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "results" / "cartpole" / trained_trial.name
    shutil.copytree(trained_trial, copy)
    return copy
