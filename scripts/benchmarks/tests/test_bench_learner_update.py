"""scripts/bench_learner_update.py's report, on timings given by hand (no training)."""

from __future__ import annotations

import runpy

from benchmarks.common import SCRIPTS

MACHINE = {"cpus": 2, "load_average_1m": 1.0}


def result(seconds: dict[str, list[float]]) -> object:
    script = runpy.run_path(str(SCRIPTS / "bench_learner_update.py"))
    return script["Result"]("suite", 256, seconds, MACHINE, MACHINE)


def test_each_variant_gets_its_median_spread_and_speed_against_float32() -> None:
    report = result(
        {
            "float32": [0.40, 0.42, 0.44],
            "float32 channels_last": [0.20, 0.21, 0.22],
            "bf16": [0.30, 0.30, 0.31],
            "bf16 channels_last": [0.10, 0.105, 0.11],
        }
    )
    text = " ".join(report.report().split())  # type: ignore[attr-defined]
    assert "3 rounds (medians, spread min-max)" in text
    assert "float32 channels_last 0.210 (0.200-0.220) 2.00x float32's speed" in text
    assert "bf16 channels_last 0.105 (0.100-0.110) 4.00x float32's speed" in text
    assert report.to_json()["speedup_vs_float32"]["bf16"] == 0.42 / 0.30  # type: ignore[attr-defined]


def test_rounds_that_differ_by_more_than_a_quarter_give_no_speed() -> None:
    report = result(
        {
            "float32": [0.40, 0.40],
            "float32 channels_last": [0.10, 0.30],
            "bf16": [0.30, 0.30],
            "bf16 channels_last": [0.20, 0.20],
        }
    )
    line = next(line for line in report.report().splitlines() if "float32 channels_last" in line)  # type: ignore[attr-defined]
    assert "rounds differ >25%" in line
    assert "x float32's speed" not in line
    assert report.to_json()["speedup_vs_float32"]["float32 channels_last"] is None  # type: ignore[attr-defined]
