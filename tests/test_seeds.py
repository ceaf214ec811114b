"""`--seeds N` runs one config as N trials with seeds 0..N-1."""

from __future__ import annotations

import json
from pathlib import Path


def test_seeds_run_as_separate_trials(cartpole_seeds_run: Path) -> None:
    """conftest's `ppo_cartpole.py --smoke --seeds 2` run."""
    trials = json.loads((cartpole_seeds_run / "summary.json").read_text())["trials"]
    assert len(trials) == 2 and all(t["status"] == "OK" for t in trials)
    seeds = {
        json.loads((cartpole_seeds_run / t["trial"] / "params.json").read_text())["seed"]
        for t in trials
    }
    assert seeds == {0, 1}
