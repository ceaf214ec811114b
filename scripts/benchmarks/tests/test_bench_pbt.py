"""The PBT benchmark's arithmetic, on real result files."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.pbt import PbtBench, steps_per_second


def test_pbt_bench_report_scales_against_one_runner() -> None:
    before, after = {"cpus": 2, "load_average_1m": 0.4}, {"cpus": 2, "load_average_1m": 2.1}
    bench = PbtBench(10, 110.0, 100.0, {1: 500.0, 2: 900.0}, before, after)
    assert bench.ratio == 1.1
    report = bench.report()
    assert "1.80x" in report
    assert "1 round: no spread" in report  # one run a side: no spread to invent
    assert report.endswith("load average before 0.4, after 2.1 on 2 CPUs")
    assert json.loads(json.dumps(bench.to_json()))["ratio"] == 1.1


def test_steps_per_second_reads_the_last_result(tmp_path: Path) -> None:
    rows = [
        {"env_runners": {"num_env_steps_sampled_lifetime": 100.0}, "time_total_s": 1.0},
        {"env_runners": {"num_env_steps_sampled_lifetime": 1000.0}, "time_total_s": 4.0},
    ]
    path = tmp_path / "result.json"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert steps_per_second(path) == 250.0
