"""`--seeds N` runs one config as N trials with seeds 0..N-1."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import ROOT, run_cli


def test_seeds_run_as_separate_trials(storage: Path) -> None:
    run = run_cli(
        ROOT / "experiments" / "ppo_cartpole.py", "--smoke", "--seeds", "2", storage=storage
    )
    assert run.returncode == 0, run.stderr[-2000:]
    trials = run.summary("ppo_cartpole")["trials"]
    assert len(trials) == 2 and all(t["status"] == "OK" for t in trials)
    seeds = {
        json.loads((storage / "ppo_cartpole" / t["trial"] / "params.json").read_text())["seed"]
        for t in trials
    }
    assert seeds == {0, 1}
