"""An interrupted run continues from its last checkpoint: counters continue, not restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from rlsuite import metrics
from tests.helpers import ROOT, run_cli

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"
# Long enough iterations that the run is still going when it is interrupted.
FLAGS = (
    "--smoke",
    "--stop",
    "training_iteration=12",
    "--checkpoint-every",
    "1",
    "--set",
    "training.train_batch_size_per_learner=1000",
)


# slow (CI time): CI stops an RL run with Ctrl-C and with SIGTERM and resumes it in
# test_stop_signals.py (the same pause-checkpoint-resume path).
@pytest.mark.slow
def test_interrupted_run_resumes_counters(storage: Path) -> None:
    trial_glob = "ppo_cartpole/PPO_*"
    command = [
        sys.executable,
        "-m",
        "rlsuite.run",
        str(CARTPOLE),
        *FLAGS,
        "--storage-path",
        str(storage),
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    while not list(storage.glob(f"{trial_glob}/checkpoint_000002")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no third checkpoint within 300 s"
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err[-2000:]
    assert "--resume" in err
    interrupted = _progress(storage, trial_glob)
    assert 3 <= interrupted[metrics.TRAINING_ITERATION].max() < 12

    resumed = run_cli(CARTPOLE, *FLAGS, "--resume", storage=storage)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    progress = _progress(storage, trial_glob)
    iterations = list(progress[metrics.TRAINING_ITERATION])
    assert iterations[-1] == 12
    assert iterations.count(1) == 1, f"the run restarted from scratch: {iterations}"
    restarts = progress[progress["iterations_since_restore"] == 1]
    assert len(restarts) == 2 and restarts[metrics.TRAINING_ITERATION].iloc[1] >= 3
    steps = progress[metrics.ENV_STEPS_SAMPLED_LIFETIME]
    assert steps.is_monotonic_increasing, list(steps)


def _progress(storage: Path, trial_glob: str) -> pd.DataFrame:
    """result.json, one row per iteration (progress.csv gets ragged when a resumed run
    reports new columns)."""
    (trial_dir,) = storage.glob(trial_glob)
    lines = (trial_dir / "result.json").read_text().splitlines()
    return pd.json_normalize([json.loads(line) for line in lines], sep="/")
