"""A lost node survived (the seeds' preemption): on a two-node cluster on this machine
(tests/ray_nodes.py) every process of the second node is killed at once while a trial
runs there, and the run still finishes. Slow: the runs train for tens of iterations and
wait for Ray to notice the loss. Each test prints what the loss cost (`pytest -s`)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from rlsuite import metrics
from rlsuite.results import read_results
from tests.helpers import ROOT, TOKEN_ENV
from tests.ray_nodes import TwoNodes, two_node_cluster

pytestmark = pytest.mark.slow

PBT_CARTPOLE = ROOT / "experiments" / "pbt_ppo_cartpole.py"
CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"
IMAGENET = ROOT / "experiments" / "resnet50_imagenet.py"  # no scheduler to stop it early
ENV_RUNNER = "SingleAgentEnvRunner"
TRAIN_WORKER = "RayTrainWorker"
EPOCHS = 12
# Generous for what is left after the kill: one run here trained its first epoch on the
# remaining worker 92 s after the kill and its last 31 s later.
ELASTIC_RECOVERY_S = 420
ITERATIONS = 20
CHECKPOINT_EVERY = 1  # a divisor of the PBT interval (5), as the launcher requires
RUN_TIMEOUT_S = 900


def test_pbt_sweep_keeps_its_whole_population_when_a_node_is_lost(tmp_path: Path) -> None:
    """Two trials of one CPU each on two nodes of one CPU each: one trial runs on the node
    that dies. Tune restarts it from its last checkpoint on the node that is left (once
    the other trial frees its CPU), and both trials reach the stop. Not `--smoke`: its
    synchronous PBT pauses every trial after every iteration, so a trial is rarely
    running when the node goes."""
    storage = tmp_path / "results"
    experiment_dir = storage / PBT_CARTPOLE.stem
    with two_node_cluster(1, 1) as nodes:
        flags = ["--num-samples", "2", "--stop", f"{metrics.TRAINING_ITERATION}={ITERATIONS}"]
        flags += ["--checkpoint-every", str(CHECKPOINT_EVERY), "--max-failures", "3"]
        with _launched(PBT_CARTPOLE, nodes, storage, tmp_path / "run.log", *flags) as run:
            _wait_for(
                lambda: _iterations(experiment_dir, 2) >= [3, 3], run, "three iterations each"
            )
            _wait_for(lambda: nodes.alive_on_second("PPO") > 0, run, "a trial on the second node")
            killed_at = time.time()
            nodes.kill_second()
            noticed_s = nodes.wait_until_second_is_dead()
            returncode = run.wait(timeout=RUN_TIMEOUT_S)
        assert returncode == 0, (tmp_path / "run.log").read_text()[-3000:]

    trials = json.loads((experiment_dir / "summary.json").read_text())["trials"]
    assert len(trials) == 2, trials
    for trial in trials:
        assert trial["status"] == "OK" and trial["iterations"] == ITERATIONS, trial
    lost = [d for d in experiment_dir.glob("PPO_*") if (d / "error.txt").exists()]
    assert len(lost) == 1, f"expected one trial to fail with its node, got {lost}"
    progress = pd.read_csv(lost[0] / "progress.csv")
    before = progress[progress["timestamp"] <= killed_at]
    after = progress[progress["timestamp"] > killed_at]
    reached = int(before[metrics.TRAINING_ITERATION].max())
    resumed = int(after[metrics.TRAINING_ITERATION].min())
    # It went on from its last checkpoint, not from the start.
    assert reached - CHECKPOINT_EVERY + 1 <= resumed <= reached + 1, (reached, resumed)
    print(
        f"\nnode lost at iteration {reached}; Ray marked it dead after {noticed_s:.0f} s; the "
        f"lost trial's next iteration ({resumed}) came {after['timestamp'].min() - killed_at:.0f} s "
        f"after the kill; {reached + 1 - resumed} iteration(s) redone"
    )


def test_rl_trial_keeps_training_when_an_env_runners_node_is_lost(tmp_path: Path) -> None:
    """PPO's trial on the head with one of its two env runners on the second node (SPREAD
    placement; the head has a CPU to spare). The node dies: RLlib restarts the lost env
    runner on the head, and the trial itself never fails, so no iteration is lost."""
    storage = tmp_path / "results"
    experiment_dir = storage / CARTPOLE.stem
    with two_node_cluster(3, 1) as nodes:
        flags = [
            "--smoke",
            "--num-env-runners",
            "2",
            "--set",
            "resources.placement_strategy=SPREAD",
        ]
        flags += ["--stop", f"{metrics.TRAINING_ITERATION}=100000", "--max-failures", "3"]
        with _launched(CARTPOLE, nodes, storage, tmp_path / "run.log", *flags) as run:
            _wait_for(lambda: _iterations(experiment_dir, 1) >= [3], run, "three iterations")
            assert nodes.alive_on_head("PPO") == 1, (
                "the trial is not on the head: placement changed"
            )
            assert nodes.alive_on_second(ENV_RUNNER) == 1, "no env runner on the second node"
            killed_at = time.time()
            nodes.kill_second()
            noticed_s = nodes.wait_until_second_is_dead()
            _wait_for(
                lambda: nodes.alive_on_head(ENV_RUNNER) == 2, run, "the runner back on the head"
            )
            restored_s = time.time() - killed_at
            at_restore = _iterations(experiment_dir, 1)[0]
            _wait_for(lambda: _iterations(experiment_dir, 1)[0] >= at_restore + 3, run, "3 more")
            run.send_signal(signal.SIGINT)  # Ctrl-C: the launcher stops the trial and exits 130
            returncode = run.wait(timeout=RUN_TIMEOUT_S)
        assert returncode == 130, (tmp_path / "run.log").read_text()[-3000:]

    assert not list(experiment_dir.glob("PPO_*/error.txt")), "the trial failed"
    progress = pd.read_csv(next(experiment_dir.glob("PPO_*/progress.csv")))
    iterations = list(progress[metrics.TRAINING_ITERATION])
    assert iterations == list(range(1, len(iterations) + 1)), iterations  # none lost or redone
    during = progress[progress["timestamp"] > killed_at]
    print(
        f"\nnode lost at iteration {len(progress) - len(during)}; Ray marked "
        f"it dead after {noticed_s:.0f} s; both env runners alive on the head {restored_s:.0f} s "
        f"after the kill; {len(during)} iterations since, none lost or redone"
    )


def test_elastic_supervised_run_shrinks_and_continues_when_a_node_is_lost(tmp_path: Path) -> None:
    """An elastic ResNet run (`num_workers=1`, `max_workers=2`, a CPU per worker) on two
    nodes of one CPU each: it starts with a worker on each node. The node dies: the Train
    run fails, Tune restarts the trial from its last checkpoint (an epoch's), and the new
    Train run takes the one worker the head has left and trains to the last epoch."""
    storage = tmp_path / "results"
    experiment_dir = storage / IMAGENET.stem
    with two_node_cluster(1, 1) as nodes:
        flags = ["--smoke", "--num-samples", "1", "--max-failures", "3"]
        flags += ["--set", "num_workers=1", "--set", "max_workers=2", "--set", "cpus_per_worker=1"]
        flags += ["--set", "model=resnet18", "--set", f"epochs={EPOCHS}"]
        flags += ["--set", "synthetic_train_size=256", "--stop", f"{metrics.EPOCH}={EPOCHS}"]
        with _launched(IMAGENET, nodes, storage, tmp_path / "run.log", *flags) as run:
            _wait_for(lambda: _epochs(experiment_dir) >= 2, run, "two epochs", timeout_s=600)
            assert nodes.alive_on_head(TRAIN_WORKER) == 1, "the Train workers are not spread"
            assert nodes.alive_on_second(TRAIN_WORKER) == 1, "no Train worker on the second node"
            killed_at = time.time()
            nodes.kill_second()
            noticed_s = nodes.wait_until_second_is_dead()
            returncode = run.wait(timeout=ELASTIC_RECOVERY_S)
        assert returncode == 0, (tmp_path / "run.log").read_text()[-3000:]

    (trial,) = json.loads((experiment_dir / "summary.json").read_text())["trials"]
    assert trial["status"] == "OK" and trial["epochs"] == EPOCHS, trial
    rows = _supervised_results(experiment_dir)
    workers = list(rows[metrics.WORKERS])
    # Split by the workers that trained each epoch, not by when Tune logged it: the epoch
    # under way at the kill can have finished on both workers and reached Tune after it.
    on_two = workers.index(1) if 1 in workers else len(workers)
    before, after = rows.iloc[:on_two], rows.iloc[on_two:]
    assert len(before) >= 2 and (before[metrics.WORKERS] == 2).all(), workers
    assert len(after) and (after[metrics.WORKERS] == 1).all(), workers
    assert after["timestamp"].min() >= killed_at, "the run shrank before the node was lost"
    reached = int(before[metrics.EPOCH].max())
    resumed = int(after[metrics.EPOCH].min())
    # Checkpoints every epoch: at most the epoch under way when the node died is redone.
    assert reached <= resumed <= reached + 1, (reached, resumed)
    assert int(after[metrics.EPOCH].max()) == EPOCHS
    print(
        f"\nnode lost after epoch {reached} (2 workers); Ray marked it dead after "
        f"{noticed_s:.0f} s; epoch {resumed} came {after['timestamp'].min() - killed_at:.0f} s "
        f"after the kill on 1 worker; {reached + 1 - resumed} epoch(s) redone"
    )


def _supervised_results(experiment_dir: Path) -> pd.DataFrame:
    (result,) = experiment_dir.glob("train_driver_*/result.json")
    return pd.json_normalize(read_results(result), sep="/")


def _epochs(experiment_dir: Path) -> int:
    """Epochs the run's one trial has reported so far."""
    return sum(len(read_results(p)) for p in experiment_dir.glob("train_driver_*/result.json"))


class _launched:
    """`python -m rlsuite.run` joining `nodes`, killed if the test ends before it does."""

    def __init__(self, path: Path, nodes: TwoNodes, storage: Path, log: Path, *flags: str):
        self.command = [sys.executable, "-m", "rlsuite.run", str(path), *flags]
        self.command += ["--address", nodes.address, "--storage-path", str(storage)]
        self.log = log

    def __enter__(self) -> subprocess.Popen[bytes]:
        with self.log.open("wb") as out:
            self.run = subprocess.Popen(
                self.command,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**TOKEN_ENV, "PYTHONUNBUFFERED": "1"},
                cwd=ROOT,
            )
        return self.run

    def __exit__(self, *exc: object) -> None:
        if self.run.poll() is None:
            self.run.kill()
            self.run.wait()


def _iterations(experiment_dir: Path, trials: int = 2) -> list[int]:
    """Iterations each of the run's `trials` has reported so far, fewest first."""
    counts = []
    for progress in experiment_dir.glob("PPO_*/progress.csv"):
        try:
            counts.append(len(pd.read_csv(progress)))
        except (pd.errors.EmptyDataError, OSError):
            counts.append(0)
    return sorted(counts) if len(counts) == trials else [0] * trials


def _wait_for(
    done: object, run: subprocess.Popen[bytes], what: str, timeout_s: float = 300
) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():  # type: ignore[operator]
        assert run.poll() is None, f"the run ended before {what}"
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} after {timeout_s} s")
        time.sleep(0.5)
