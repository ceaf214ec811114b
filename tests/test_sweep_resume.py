"""A PBT sweep whose driver was killed (SIGKILL: no chance to clean up) continues with
--resume: every trial of the population carries on from its checkpoint."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlsuite import metrics
from tests.helpers import ROOT, run_cli

PBT_CARTPOLE = ROOT / "experiments" / "pbt_ppo_cartpole.py"
# The driver is killed once both trials have 2 results: with 8 to go, neither can finish
# before the kill even when one trial runs far ahead of the other (seen at 4 on a loaded box).
ITERATIONS = 8
FLAGS = (
    "--smoke",
    "--stop",
    f"training_iteration={ITERATIONS}",
    "--set",
    "training.train_batch_size_per_learner=1000",
)


def _rows(trial_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (trial_dir / "result.json").read_text().splitlines()]


# slow (CI time): CI restores a SIGKILLed sweep with Tuner.restore in test_search's
# killed-sweep test; this one adds PBT's population to it.
@pytest.mark.slow
def test_killed_sweep_resumes_every_trial(storage: Path) -> None:
    sweep = storage / "pbt_ppo_cartpole"
    command = [
        sys.executable,
        "-m",
        "rlsuite.run",
        str(PBT_CARTPOLE),
        *FLAGS,
        "--storage-path",
        str(storage),
    ]
    driver = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not _progressed(sweep, min_iterations=2):
        assert driver.poll() is None, driver.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the sweep made no progress in 300 s"
        time.sleep(0.5)
    time.sleep(2)  # let Tune write its experiment state at least once more
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and everything it started
    driver.wait(timeout=60)
    before = {d.name: len(_rows(d)) for d in sweep.glob("PPO_*")}
    assert len(before) == 2 and all(0 < n < ITERATIONS for n in before.values()), before

    resumed = run_cli(PBT_CARTPOLE, *FLAGS, "--resume", storage=storage, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    trials = resumed.summary("pbt_ppo_cartpole")["trials"]
    assert {t["trial"] for t in trials} == set(before), "resume must continue the same trials"
    for trial_dir in sweep.glob("PPO_*"):
        iterations = [row[metrics.TRAINING_ITERATION] for row in _rows(trial_dir)]
        assert iterations[-1] == ITERATIONS
        restored = [
            row
            for row in _rows(trial_dir)[before[trial_dir.name] :]
            if row["iterations_since_restore"] == 1
        ]
        assert restored and restored[0][metrics.TRAINING_ITERATION] > 1, (
            f"{trial_dir.name} restarted from scratch"
        )


def _progressed(sweep: Path, min_iterations: int) -> bool:
    """Both trials reported `min_iterations` results and each has a checkpoint (a trial
    that just exploited the other may hold a single fresh one)."""
    trials = list(sweep.glob("PPO_*"))
    return len(trials) == 2 and all(
        (t / "result.json").exists()
        and len(_rows(t)) >= min_iterations
        and any(t.glob("checkpoint_*"))
        for t in trials
    )
