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


def test_ratio_is_of_medians() -> None:
    bench = TrainBench(
        images=2048,
        batch_size=128,
        epochs=3,
        device="CPU",
        suite_rounds=[190.0, 10.0, 195.0],
        plain_rounds=[200.0, 300.0, 100.0],
    )
    assert bench.ratio == 0.95
    assert "0.950" in bench.report() and "goal >= 0.95" in bench.report()
    assert json.loads(json.dumps(bench.to_json()))["ratio"] == 0.95


def test_suite_figure_is_the_last_epochs(tmp_path: Path) -> None:
    rows = [{metrics.SAMPLES_PER_SECOND: 50.0}, {metrics.SAMPLES_PER_SECOND: 80.0}]
    path = tmp_path / "result.json"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert last_samples_per_second(path) == 80.0


def test_plain_loop_trains_the_bench_model() -> None:
    config = bench_config(images=16, batch_size=8, epochs=1, gpu=False).replace(image_size=8)
    assert plain_images_per_second(config) > 0
