"""The training benchmark's arithmetic and its plain PyTorch side, on tiny real objects."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.train import (
    TrainBench,
    bench_config,
    last_samples_per_second,
    plain_images_per_second,
)
from rlsuite import metrics

BEFORE, AFTER = {"cpus": 2, "load_average_1m": 0.4}, {"cpus": 2, "load_average_1m": 2.1}


def _bench(suite: list[float], plain: list[float]) -> TrainBench:
    return TrainBench(2048, 128, 3, "CPU", suite, plain, BEFORE, AFTER)


def test_ratio_is_of_medians() -> None:
    bench = _bench(suite=[190.0, 175.0, 195.0], plain=[200.0, 210.0, 180.0])  # means 186.7, 196.7
    assert bench.ratio == 0.95
    assert "0.950" in bench.report() and "goal >= 0.95" in bench.report()
    assert json.loads(json.dumps(bench.to_json()))["ratio"] == 0.95


def test_rounds_40_percent_apart_give_no_ratio_and_the_report_says_why() -> None:
    bench = _bench(suite=[100.0, 140.0, 100.0], plain=[100.0, 105.0, 95.0])
    assert bench.ratio is None
    report = bench.report()
    assert "last of 3 epochs, 3 rounds (medians, spread min-max):" in report
    assert "rlsuite Ray Train loop       100.0 images/s  (100.0-140.0)" in report
    assert "ratio rlsuite / plain    rounds differ >25%  (goal >= 0.95)" in report
    assert report.endswith("load average before 0.4, after 2.1 on 2 CPUs")
    figures = json.loads(json.dumps(bench.to_json()))
    assert figures["ratio"] is None and figures["noisy"]
    assert figures["spread"]["suite_images_per_s"] == [100.0, 140.0]
    assert figures["suite_images_per_s"] == 100.0  # the medians stay


def test_rounds_within_10_percent_print_the_ratio_and_both_spreads() -> None:
    bench = _bench(suite=[96.0, 100.0, 104.0], plain=[100.0, 95.0, 105.0])
    report = bench.report()
    assert "plain PyTorch loop           100.0 images/s  (95.0-105.0)" in report
    assert "rlsuite Ray Train loop       100.0 images/s  (96.0-104.0)" in report
    assert "ratio rlsuite / plain        1.000" in report and "differ" not in report
    assert not json.loads(json.dumps(bench.to_json()))["noisy"]


def test_one_round_prints_the_ratio_without_a_spread() -> None:
    report = _bench(suite=[90.0], plain=[100.0]).report()
    assert "1 round: no spread" in report and "images/s  (" not in report  # no min-max of one
    assert "0.900" in report


def test_suite_figure_is_the_last_epochs(tmp_path: Path) -> None:
    rows = [{metrics.SAMPLES_PER_SECOND: 50.0}, {metrics.SAMPLES_PER_SECOND: 80.0}]
    path = tmp_path / "result.json"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert last_samples_per_second(path) == 80.0


def test_plain_loop_trains_the_bench_model() -> None:
    config = bench_config(images=16, batch_size=8, epochs=1, gpu=False).replace(image_size=8)
    assert plain_images_per_second(config) > 0
