"""The multi-agent benchmark's arithmetic, and its raw-env side on the real env."""

from __future__ import annotations

import json

from benchmarks.multiagent import MultiAgentBench, TrainingFigures, raw_env_rate


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
    assert json.loads(json.dumps(bench.to_json()))["rllib_default"]["learning_s"] == 71.0


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
