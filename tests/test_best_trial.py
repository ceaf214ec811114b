"""Which trial is best, and its best value, by the experiment's metric and mode: the lowest
value wins where the mode is "min" (a loss, steps to solve), the highest otherwise. On
result files and frames the test writes; no Ray."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from rlsuite.evaluation.locate import best_trial
from rlsuite.launcher.summary import best_of

METRIC = "evaluation/loss"


def write_trial(experiment: Path, name: str, values: list[float | None]) -> Path:
    """A trial directory: params.json, one result line per value (None: the metric missing)
    and one checkpoint."""
    trial = experiment / name
    (trial / "checkpoint_000000").mkdir(parents=True)
    (trial / "params.json").write_text("{}")
    lines = [{"evaluation": {} if v is None else {"loss": v}} for v in values]
    (trial / "result.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return trial


@pytest.mark.parametrize(("mode", "expected"), [("min", "low"), ("max", "high")])
def test_the_best_trial_follows_the_mode(tmp_path: Path, mode: str, expected: str) -> None:
    experiment = tmp_path / "experiment"
    trials = [
        write_trial(experiment, "low", [3.0, 0.5, 2.0]),  # the lowest value of all: 0.5
        write_trial(experiment, "high", [4.0, 5.0]),  # the highest: 5.0
        # The lowest maximum: picked by a "min" that compared each trial's highest value.
        write_trial(experiment, "middle", [1.0, 2.5]),
        write_trial(experiment, "no_value", [None, None]),
    ]
    (experiment / "summary.json").write_text(json.dumps({"metric": METRIC, "mode": mode}))
    assert best_trial(experiment, trials).name == expected


def test_a_trial_without_a_finite_value_is_never_best(tmp_path: Path) -> None:
    experiment = tmp_path / "experiment"
    trials = [
        write_trial(experiment, "no_value", [None]),
        write_trial(experiment, "nan", [math.nan, math.inf]),
        write_trial(experiment, "one", [9.0]),
    ]
    for summary in ({"mode": "min"}, {"mode": "max"}, {}):  # {}: a run that wrote no mode
        (experiment / "summary.json").write_text(json.dumps({"metric": METRIC, **summary}))
        assert best_trial(experiment, trials).name == "one"


@pytest.mark.parametrize(("mode", "expected"), [("min", 0.5), ("max", 5.0)])
def test_best_of_a_history_follows_the_mode(mode: str, expected: float) -> None:
    history = pd.DataFrame({METRIC: [2.0, math.nan, 0.5, 5.0]})
    assert best_of(history, METRIC, mode) == expected


def test_best_of_a_history_without_the_metric_is_none() -> None:
    assert best_of(None, METRIC) is None
    assert best_of(pd.DataFrame({"other": [1.0]}), METRIC) is None
    assert best_of(pd.DataFrame({METRIC: [math.nan]}), METRIC) is None
