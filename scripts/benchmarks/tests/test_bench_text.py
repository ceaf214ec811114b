"""The text benchmark's plain loop and arithmetic (the suite's side is the Train loop
that tests/test_supervised_text.py runs through the CLI)."""

from __future__ import annotations

import json

from benchmarks.text import TextBenchResult, bench_config, plain_epoch

BEFORE, AFTER = {"cpus": 2, "load_average_1m": 0.4}, {"cpus": 2, "load_average_1m": 2.1}


def _result(plain: list[float], suite: list[float]) -> TextBenchResult:
    return TextBenchResult("tiny", 128, 32, "CPU", plain, suite, BEFORE, AFTER)


def test_ratio_is_of_medians() -> None:
    result = _result(plain=[100.0, 90.0, 80.0], suite=[95.0, 80.0, 85.0])
    assert result.ratio == 85.0 / 90.0
    assert "ratio suite / plain            0.94" in result.report()
    assert result.to_json()["ratio"] == result.ratio


def test_rounds_40_percent_apart_give_no_ratio_and_the_report_says_why() -> None:
    result = _result(plain=[50.0, 70.0, 50.0], suite=[48.0, 50.0, 49.0])
    assert result.ratio is None
    report = result.report()
    assert "BERT-tiny seq 128 batch 32, CPU, 3 rounds (medians, spread min-max):" in report
    assert "plain PyTorch                 50.00 samples/s  (50.00-70.00)" in report
    assert "ratio suite / plain      rounds differ >25%" in report
    assert report.endswith("load average before 0.4, after 2.1 on 2 CPUs")
    figures = json.loads(json.dumps(result.to_json()))
    assert figures["ratio"] is None and figures["noisy"]
    assert figures["spread"]["plain_samples_per_second"] == [50.0, 70.0]
    assert figures["machine_before"]["load_average_1m"] == 0.4


def test_rounds_within_10_percent_print_the_ratio_and_both_spreads() -> None:
    result = _result(plain=[60.0, 58.0, 62.0], suite=[56.0, 54.0, 57.0])
    report = result.report()
    assert "plain PyTorch                 60.00 samples/s  (58.00-62.00)" in report
    assert "suite's Ray Train loop        56.00 samples/s  (54.00-57.00)" in report
    assert "ratio suite / plain            0.93" in report and "differ" not in report
    assert not result.to_json()["noisy"]


def test_plain_loop_times_one_whole_epoch_of_a_tiny_bert() -> None:
    config = bench_config("tiny", seq_length=16, batch_size=8, samples=36, threads=1)
    samples, seconds = plain_epoch(config)
    assert samples == 36 and seconds > 0
