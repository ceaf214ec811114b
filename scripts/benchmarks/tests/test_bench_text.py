"""The text benchmark's plain loop and arithmetic (the suite's side is the Train loop
that tests/test_supervised_text.py runs through the CLI)."""

from __future__ import annotations

from benchmarks.text import TextBenchResult, bench_config, plain_epoch


def test_ratio_is_of_medians() -> None:
    result = TextBenchResult(
        "tiny", 128, 32, "CPU", plain=[100.0, 90.0, 10.0], suite=[95.0, 80.0, 85.0]
    )
    assert result.ratio == 85.0 / 90.0
    assert "ratio 0.94" in result.report()
    assert result.to_json()["ratio"] == result.ratio


def test_plain_loop_times_one_whole_epoch_of_a_tiny_bert() -> None:
    config = bench_config("tiny", seq_length=16, batch_size=8, samples=36, threads=1)
    samples, seconds = plain_epoch(config)
    assert samples == 36 and seconds > 0
