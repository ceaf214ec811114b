"""What a PBT smoke sweep of `pbt_ppo_cartpole.py` must show: an exploit happened, the
learner trained with each trial's perturbed values afterwards, and `rlsuite.report` draws
the schedules and names the exploits. test_cluster.py's two-node sweep is checked with
these (one sweep for both, CI time); test_pbt.py's MADDPG sweep reads its trials too."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite import metrics
from rlsuite.results import read_results, trial_dirs
from tests.helpers import ROOT

LEARNING_RATE = "default_optimizer_learning_rate"
ENTROPY = "curr_entropy_coeff"


def smoke_trials_results(experiment_dir: Path) -> list[list[dict]]:
    """Each trial's results. Smoke PBT is synchronous with a 0.5 quantile: after iteration
    1 the worse of the two trials exploits the better one, and iteration 2 trains with the
    perturbed values (a third iteration would only add a second round of trial restarts)."""
    trials = [read_results(t / "result.json") for t in trial_dirs(experiment_dir)]
    assert trials and all(rows[-1][metrics.TRAINING_ITERATION] == 2 for rows in trials)
    return trials


def check_ppo_exploits(experiment_dir: Path, report_dir: Path) -> None:
    """At least one exploit, after which PPO's learner used the trial's new lr and
    entropy coefficient; the report of the sweep shows it."""
    exploits = 0
    for rows in smoke_trials_results(experiment_dir):
        for before, after in itertools.pairwise(rows):
            if after["config"]["lr"] != before["config"]["lr"]:
                exploits += 1
            learner = after["learners"][DEFAULT_MODULE_ID]
            assert learner[LEARNING_RATE] == pytest.approx(after["config"]["lr"])
            assert learner[ENTROPY] == pytest.approx(after["config"]["entropy_coeff"])
    assert exploits >= 1, "no PBT exploit happened"
    _check_pbt_report(experiment_dir, report_dir)


def _check_pbt_report(results: Path, output: Path) -> None:
    """The report of the same sweep draws each trial's lr schedule and lists Tune's exploits."""
    done = subprocess.run(
        [sys.executable, "-m", "rlsuite.report", str(results), "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figure = (output / "pbt_pbt_ppo_cartpole.png").read_bytes()
    assert figure.startswith(b"\x89PNG") and len(figure) > 10_000
    text = (output / "report.md").read_text()
    assert "![hyperparameter schedules](pbt_pbt_ppo_cartpole.png)" in text
    trials = {d.name for d in results.glob("PPO_*")}
    exploits = re.findall(
        r"^- iteration \d+: (\S+) copied (\S+) .*\blr [\d.e-]+ -> [\d.e-]+", text, re.MULTILINE
    )
    assert exploits, text
    for trial, source in exploits:  # named by their directories, not Tune's internal tags
        assert trial in trials and source in trials and trial != source
