"""The report's tables and curves from small results this file writes (no Ray run; a few
seconds): how scores print, a supervised run's columns and axis, what the
final score averages, learning curves of PBT trials whose env steps go backwards."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pytest

from rlsuite import metrics
from rlsuite.report import main as report_main
from rlsuite.reporting import figures, formatting, markdown, runs, stats, sweep
from tests.helpers import ROOT, nested


def rows(text: str, first_cell: str) -> list[list[str]]:
    """The cells of each markdown table row that starts with `first_cell`."""
    found = [line for line in text.splitlines() if line.startswith(f"| {first_cell} |")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in found]


def header(text: str, first_cell: str) -> list[str]:
    (cells,) = rows(text, first_cell)
    return cells


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.6129, "0.6129"),  # a win rate: 0.6 hid which config was better
        (0.04623, "0.04623"),
        (-43.04, "-43.04"),
        (476.9, "476.9"),
        (46702.4, "46,702"),  # from 1,000 on: whole, not 4.67e+04
        (8.165e-05, "0.00008165"),  # a std of accuracies: not 8.165e-05
        (-0.0, "0"),
        (float("nan"), "-"),
        (float("inf"), "inf"),
    ],
)
def test_numbers_keep_four_significant_digits(value: float, text: str) -> None:
    assert formatting.number(value) == text


def self_play_trial(name: str, win_rates: list[float], returns: tuple[float, float]) -> runs.Trial:
    """Win rates reported every 5th iteration, as self-play's are, and two policies' returns."""
    results: list[dict[str, Any]] = []
    for iteration in range(1, 5 * len(win_rates) + 1):
        result: dict[str, Any] = {
            metrics.TRAINING_ITERATION: iteration,
            metrics.ENV_STEPS_SAMPLED_LIFETIME: 1000 * iteration,
            metrics.TIME_TOTAL_S: 10.0 * iteration,
        }
        if iteration % 5 == 0:
            result[metrics.WIN_RATE_VS_HEURISTIC] = win_rates[iteration // 5 - 1]
        for policy, value in zip(("main", "random"), returns, strict=True):
            result[metrics.policy_return_mean(policy)] = value
        results.append(nested(result))
    return runs.Trial(name, {"env": "classic/connect_four", "seed": 0}, results)


def test_win_rates_that_differ_in_the_third_digit_read_apart(tmp_path: Path) -> None:
    """results/slow_replica47, sp_head_s4 and sp_head_s3 all printed 0.6 (0.6138, 0.6362,
    0.5617); the per-policy table printed 1 decimal too."""
    configs = [
        runs.Config(
            name,
            tmp_path,
            metrics.WIN_RATE_VS_HEURISTIC,
            [self_play_trial("PPO_0", [rate] * 5, (0.07737, -0.7695))],
        )
        for name, rate in (("a", 0.6138), ("b", 0.6362), ("c", 0.5617))
    ]
    page, _ = markdown.write(configs, tmp_path / "report")
    text = page.read_text()
    for name, rate in (("a", "0.6138"), ("b", "0.6362"), ("c", "0.5617")):
        (cells,) = rows(text, name)
        assert cells[3:7] == [rate, f"[{rate}, {rate}]", rate, "0"]  # IQM, CI, mean, std
    assert {r[2] for r in rows(text, "PPO_0")} == {"0.6138", "0.6362", "0.5617"}  # final
    assert rows(text, "main")[0][2] == "0.07737" and rows(text, "random")[0][2] == "-0.7695"


def test_final_score_is_over_the_last_reported_values_as_the_report_says(
    tmp_path: Path,
) -> None:
    """A win rate reported every 5th iteration: its final score averages its last 5
    reports, 25 iterations, and the report and docs/evaluation.md say so (they said "last 5
    iterations")."""
    trial = self_play_trial("PPO_0", [0.1] * 5 + [0.5, 0.6, 0.7, 0.8, 0.9], (0.0, 0.0))
    assert len(trial.results) == 50
    assert trial.final_score(metrics.WIN_RATE_VS_HEURISTIC) == pytest.approx(0.7)
    window = runs.FinalWindow()
    assert window.describe() == "last 5 reported values"
    assert runs.FinalWindow(iterations=1).describe() == "last reported value"
    config = runs.Config("sp", tmp_path, metrics.WIN_RATE_VS_HEURISTIC, [trial])
    page, _ = markdown.write([config], tmp_path / "report")
    assert "over each trial's last 5 reported values" in page.read_text()
    docs = " ".join((ROOT / "docs" / "evaluation.md").read_text().split())
    assert "its metric's mean over its last 5 reported values" in docs


def write_supervised_run(root: Path, seeds: int = 3, epochs: int = 10) -> Path:
    """A results directory as `rlsuite.run` writes for a supervised experiment (Ray Train
    trials: params are SupervisedConfig's fields; one result per epoch with what
    rlsuite.supervised.loop reports, no env steps)."""
    run = root / "resnet_cifar10"
    run.mkdir()
    summary = {"experiment": "resnet_cifar10", "metric": metrics.VALIDATION_ACCURACY}
    (run / "summary.json").write_text(json.dumps({**summary, "mode": "max"}))
    for seed in range(seeds):
        trial = run / f"TorchTrainer_aa_{seed:05d}"
        trial.mkdir()
        params = {"model": "resnet18", "dataset": "cifar10", "seed": seed, "epochs": epochs}
        (trial / "params.json").write_text(json.dumps(params))
        lines = []
        for epoch in range(1, epochs + 1):
            result = {
                metrics.TRAINING_ITERATION: epoch,
                metrics.EPOCH: epoch,
                metrics.TRAIN_LOSS: 1.0 / epoch,
                metrics.SAMPLES_PER_SECOND: 2000.0 + seed,
                metrics.VALIDATION_LOSS: 0.5 - 0.01 * epoch,
                metrics.VALIDATION_ACCURACY: 0.9 + 0.004 * epoch + 0.001 * seed,
                metrics.TIME_TOTAL_S: 10.0 * epoch,
                "timestamp": 1000 + epoch,
            }
            lines.append(json.dumps(result))  # Ray Train's keys hold "/": Tune keeps them flat
        (trial / "result.json").write_text("\n".join(lines) + "\n")
    return run


def test_supervised_report_counts_epochs_not_env_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found: "Mean of empty slice" on stderr, env steps and env steps/s of nan, "unknown
    env", and an empty env-steps panel with a -4e-05k axis."""
    run = write_supervised_run(tmp_path)
    output = tmp_path / "report"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarning fails the test
        assert report_main([str(run), "--output", str(output)]) == 0
    assert capsys.readouterr().err == ""
    text = (output / "report.md").read_text()
    assert "env steps" not in text and "nan" not in text
    assert header(text, "config") == [
        *("config", "workload", "seeds", "IQM", "95% CI", "mean", "std"),
        *("epochs", "samples/s", "wall time (s)"),
    ]
    (cells,) = rows(text, "resnet_cifar10")
    assert cells[1] == "resnet18 on cifar10" and cells[2] == "3"
    assert cells[3] == "0.933"  # IQM of 3 seeds: the middle one, epochs 6-10: 0.9 + 0.032 + 0.001
    assert cells[7:] == ["10", "2,001", "100.0"]  # epochs, median samples/s, wall time
    assert header(text, "trial")[4:] == ["epochs", "samples/s", "wall time (s)"]

    configs = [runs.load(run)]
    figure = figures.learning_curves_figure(configs, runs.progress(configs))
    try:
        left = figure.axes[0]
        assert left.get_xlabel() == "epochs"
        epochs = np.asarray(left.lines[0].get_xdata())
        assert (epochs.min(), epochs.max()) == (1, 10)
        assert all(float(tick).is_integer() for tick in left.get_xticks())
        assert figure.get_suptitle().startswith("resnet18 on cifar10:")
    finally:
        plt.close(figure)


def test_a_final_window_in_env_steps_of_a_supervised_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was ignored: numpy's "All-NaN slice" on stderr, each trial's last value scored,
    and the report claiming a window of the last N env steps."""
    run = write_supervised_run(tmp_path, seeds=1, epochs=3)
    output = tmp_path / "report"
    assert report_main([str(run), "--output", str(output), "--final-env-steps", "100"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert f"--final-env-steps: {run} reports no env steps" in err and "drop the flag" in err
    assert not output.exists()


def test_what_no_trial_reports_is_left_out_without_a_warning(tmp_path: Path) -> None:
    """No throughput: no column; no wall time (another tool's results): "-", with no
    "Mean of empty slice" from numpy."""
    run = write_supervised_run(tmp_path, seeds=2, epochs=3)
    for result_json in run.glob("*/result.json"):
        results = [json.loads(line) for line in result_json.read_text().splitlines()]
        for result in results:
            del result[metrics.SAMPLES_PER_SECOND], result[metrics.TIME_TOTAL_S]
        result_json.write_text("".join(json.dumps(r) + "\n" for r in results))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page, _ = markdown.write([runs.load(run)], tmp_path / "report")
    text = page.read_text()
    assert header(text, "trial")[4:] == ["epochs", "wall time (s)"]
    assert rows(text, "resnet_cifar10")[0][7:] == ["3", "-"]


def test_curves_of_trials_whose_env_steps_go_backwards() -> None:
    """A PBT exploit restores another trial's checkpoint, a little behind in env steps and
    time (results/benchmarks/pbt_maddpg_spread-seed0: time_total_s 2.5-2.7 s back). np.interp
    takes increasing x: the curve ended at 250 steps with 2.5, between two earlier points,
    instead of the trial's furthest 300 and its last value, 3.1."""
    x = np.array([0.0, 100.0, 200.0, 300.0, 250.0])  # exploited after 300 steps
    y = np.array([0.0, 1.0, 2.0, 3.0, 3.1])
    grid, mean, low, high = stats.curve_band([x, x + 0.0], [y, y + 0.0], points=7)
    assert grid[-1] == 300 and mean[-1] == pytest.approx(3.1)
    assert np.all(np.diff(mean) >= 0) and np.allclose(low, mean) and np.allclose(high, mean)


def test_seeds_whose_params_name_one_function_at_two_addresses_are_no_sweep(
    tmp_path: Path,
) -> None:
    """A resumed trial rewrites params.json in a new process, where RLlib's default
    policy_mapping_fn has another address: the seeds are still one config."""

    def trial(seed: int, address: str, lr: float = 1e-3) -> runs.Trial:
        params = {
            "seed": seed,
            "lr": lr,
            "policy_mapping_fn": f"<function AlgorithmConfig.DEFAULT_POLICY_MAPPING_FN at {address}>",
        }
        result = {metrics.TRAINING_ITERATION: 1, metrics.EPISODE_RETURN_MEAN: float(seed)}
        return runs.Trial(f"PPO_{seed}", params, [nested(result)])

    seeds = runs.Config(
        "seeds",
        tmp_path,
        metrics.EPISODE_RETURN_MEAN,
        [trial(0, "0x7f23dba944a0"), trial(1, "0x7fcdc0e944a0")],
    )
    assert sweep.searched_keys(seeds) == []
    assert sweep.section(seeds, tmp_path) == []
    searched = runs.Config(
        "lrs",
        tmp_path,
        metrics.EPISODE_RETURN_MEAN,
        [trial(0, "0x7f23dba944a0"), trial(1, "0x7fcdc0e944a0", lr=1e-4)],
    )
    assert sweep.searched_keys(searched) == ["lr"]
