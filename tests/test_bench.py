"""The benchmarks' own arithmetic, on real result files."""

from __future__ import annotations

import json
from pathlib import Path

from rlsuite.bench_multiagent import MultiAgentBench, TrainingFigures, raw_env_rate
from rlsuite.bench_overhead import OverheadResult
from rlsuite.bench_pbt import PbtBench, steps_per_second


def test_overhead_ratio_is_of_medians() -> None:
    result = OverheadResult(iterations=20, rounds=3, rlsuite_s=[11, 10, 30], rllib_s=[10, 9, 8])
    assert result.ratio == 11 / 9
    assert "1.222" in result.report()


def test_pbt_bench_report_scales_against_one_runner() -> None:
    bench = PbtBench(
        iterations=10, pbt_s=110.0, no_pbt_s=100.0, env_steps_per_s={1: 500.0, 2: 900.0}
    )
    assert bench.ratio == 1.1
    assert "1.80x" in bench.report()
    assert json.loads(bench.to_json())["ratio"] == 1.1


def test_steps_per_second_reads_the_last_result(tmp_path: Path) -> None:
    rows = [
        {"env_runners": {"num_env_steps_sampled_lifetime": 100.0}, "time_total_s": 1.0},
        {"env_runners": {"num_env_steps_sampled_lifetime": 1000.0}, "time_total_s": 4.0},
    ]
    path = tmp_path / "result.json"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert steps_per_second(path) == 250.0


def test_multiagent_bench_reports_ratios_against_rllibs_default_path() -> None:
    default = TrainingFigures(env_steps_per_s=50.0, iterations=3, sampling_s=9.0, learning_s=71.0)
    suite = TrainingFigures(env_steps_per_s=600.0, iterations=4, sampling_s=4.5, learning_s=0.5)
    bench = MultiAgentBench(
        env_steps_budget=12_000, raw_env=3000.0, rllib_default=default, rlsuite=suite
    )
    assert bench.ratio == 12.0
    report = bench.report()
    assert "12.0x" in report and "20.0% of raw" in report and "1.7% of raw" in report
    assert "9.0 s sampling, 71.0 s learning" in report
    assert json.loads(bench.to_json())["rllib_default"]["learning_s"] == 71.0


def test_multiagent_figures_read_a_nested_training_result() -> None:
    result = {
        "env_runners": {"num_env_steps_sampled_lifetime": 3200},
        "time_total_s": 8.0,
        "training_iteration": 1,
        "timers": {"env_runner_sampling_timer": 6.5, "learner_update_timer": 1.0},
    }
    figures = TrainingFigures.from_result(result)
    assert figures == TrainingFigures(400.0, 1, 6.5, 1.0)


def test_raw_env_rate_steps_the_real_env_through_episode_ends() -> None:
    assert raw_env_rate(60) > 0  # simple_spread episodes last 25 steps: two resets
