"""scripts/bench.py: its arithmetic on real result rows, and its baseline side for real."""

from __future__ import annotations

import json
import subprocess
import sys

from benchmarks.baselines import BASELINES
from benchmarks.cases import CASES
from benchmarks.common import ROOT
from benchmarks.side import Side, summarize
from benchmarks.throughput import CaseResult, run_baseline
from rlsuite import metrics
from rlsuite.results import lookup


def _row(steps: float, trained: float, seconds: float, episode_return: float | None) -> dict:
    runners: dict = {"num_env_steps_sampled_lifetime": steps}
    if episode_return is not None:
        runners["episode_return_mean"] = episode_return
    learners = {"__all_modules__": {"num_module_steps_trained_lifetime": trained}}
    return {"env_runners": runners, "learners": learners, "time_total_s": seconds}


def test_summarize_reads_the_last_result_and_the_first_time_at_the_target() -> None:
    rows = [_row(1000, 4000, 2.0, None), _row(2000, 8000, 5.0, 460.0), _row(3000, 12000, 8.0, 500)]
    side = summarize(rows, target=450, wall_s=20.0)
    assert side.env_steps_per_s == 3000 / 8.0
    assert side.learner_samples_per_s == 12000 / 8.0
    assert side.time_to_return_s == 5.0 and side.final_return == 500.0
    assert summarize(rows, target=600, wall_s=20.0).time_to_return_s is None


def _side(steps_per_s: float, train_s: float, to_return: float | None) -> Side:
    return Side(
        steps_per_s * train_s, steps_per_s * train_s, train_s, train_s + 10, None, to_return
    )


def test_speed_ups_are_ratios_of_medians_and_above_one_when_the_suite_is_faster() -> None:
    result = CaseResult("ppo_cartpole", 100, 450, "python scripts/bench.py --case ppo_cartpole")
    # Every figure's rounds within 25% of their median: the ratios are printed.
    result.baseline.extend([_side(500, 80, 75.0), _side(540, 75, 70.0), _side(450, 90, 85.0)])
    result.suite.extend([_side(2500, 25, 18.0), _side(2300, 22, 20.0), _side(2600, 27, 16.0)])
    ratios = result.ratios()
    assert ratios["env_steps_per_s"] == 2500 / 500
    assert ratios["train_s"] == 80 / 25
    assert ratios["time_to_return_s"] == 75.0 / 18.0
    report = result.report()
    assert "5.00x" in report and "4.17x" in report and result.command in report
    assert json.loads(json.dumps(result.to_json()))["speed_up"]["env_steps_per_s"] == 5.0


def test_rounds_40_percent_apart_give_no_ratio_and_the_report_says_why() -> None:
    result = CaseResult("ppo_cartpole", 100, None, "cmd")
    result.baseline.extend([_side(500, 80, None), _side(700, 80, None), _side(500, 80, None)])
    result.suite.extend([_side(2500, 20, None), _side(2500, 20, None), _side(2550, 20, None)])
    report = result.report()
    rates = next(line for line in report.splitlines() if "env steps/s" in line)
    assert rates.split()[2:] == [
        "500",
        "500-700",
        "2,500",
        "2,500-2,550",
        "rounds",
        "differ",
        ">25%",
    ]
    training = next(line for line in report.splitlines() if "training s " in line)
    assert training.endswith("4.00x")  # train_s agrees: its ratio stays
    figures = json.loads(json.dumps(result.to_json()))
    assert figures["speed_up"]["env_steps_per_s"] is None
    assert figures["noisy"]["env_steps_per_s"] and not figures["noisy"]["train_s"]
    assert figures["spread"]["baseline"]["env_steps_per_s"] == [500, 700]
    assert figures["speed_up"]["train_s"] == 4.0


def test_rounds_within_10_percent_print_the_ratio_and_both_spreads() -> None:
    result = CaseResult("ppo_cartpole", 100, None, "cmd")
    result.baseline.extend([_side(500, 80, None), _side(520, 80, None), _side(480, 80, None)])
    result.suite.extend([_side(2500, 20, None), _side(2400, 20, None), _side(2600, 20, None)])
    report = result.report()
    assert "3 rounds (medians, spread min-max)" in report and "differ" not in report
    rates = next(line for line in report.splitlines() if "env steps/s" in line)
    assert rates.split()[2:] == ["500", "480-520", "2,500", "2,400-2,600", "5.00x"]
    assert max(len(line) for line in report.splitlines()) < 100
    assert not any(json.loads(json.dumps(result.to_json()))["noisy"].values())


def test_one_round_prints_the_ratio_without_a_spread() -> None:
    result = CaseResult("ppo_cartpole", 100, None, "cmd")
    result.baseline.append(_side(500, 80, None))
    result.suite.append(_side(2500, 20, None))
    report = result.report()
    assert "1 round: no spread" in report and "spread " not in report
    rates = next(line for line in report.splitlines() if "env steps/s" in line)
    assert rates.split()[2:] == ["500", "2,500", "5.00x"]


def test_a_round_that_misses_the_target_has_no_time_to_return() -> None:
    result = CaseResult("sac_pendulum", 100, -250, "cmd")
    result.baseline.append(_side(100, 10, None))
    result.suite.append(_side(100, 10, 8.0))
    assert result.ratios()["time_to_return_s"] is None
    assert result.median("baseline", "time_to_return_s") is None


def test_every_case_has_a_baseline_and_an_experiment() -> None:
    assert set(CASES) == set(BASELINES)
    for case in CASES.values():
        assert case.experiment is None or (ROOT / "experiments" / case.experiment).is_file()


def test_lookup_walks_flattened_keys() -> None:
    row = _row(10, 20, 1.0, 5.0)
    assert lookup(row, metrics.MODULE_STEPS_TRAINED_LIFETIME) == 20
    assert lookup(row, "env_runners/missing") is None


def test_baseline_runs_as_a_plain_rllib_script() -> None:
    side = run_baseline("ppo_cartpole", env_steps=1, smoke=True)  # two tiny iterations
    assert side.env_steps > 0 and side.learner_samples > 0 and side.train_s > 0
    assert side.wall_s > side.train_s


def test_bench_refuses_an_unknown_case() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/bench.py", "--case", "ppo_pong"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "ppo_cartpole" in lines[0]
