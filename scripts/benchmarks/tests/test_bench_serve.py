"""bench_serve's requests for an image classifier: PNGs the server's own parsing accepts at
the side the model trained on, and a ceiling from its forward pass; text models refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from benchmarks.serve_payloads import NotBenchmarked, ceiling, payload, png_images
from rlsuite.serving import classifiers
from rlsuite.supervised import checkpoint as checkpoint_files
from rlsuite.supervised import registry
from rlsuite.supervised.config import SupervisedConfig


def _checkpoint(directory: Path, config: SupervisedConfig) -> Path:
    """What the supervised loop's checkpoint holds for serving: weights and state."""
    directory.mkdir()
    model = registry.build_model(config, {})
    torch.save(model.state_dict(), directory / checkpoint_files.MODEL_FILE)
    state = {"epoch": 1, "config": config.to_dict(), "model_kwargs": {}}
    (directory / checkpoint_files.STATE_FILE).write_text(json.dumps(state))
    return directory


def test_images_are_pngs_the_classifier_parses_at_its_side(tmp_path: Path) -> None:
    config = SupervisedConfig(
        dataset="synthetic_images", model="resnet18", cifar_stem=True, image_size=12
    )
    checkpoint = _checkpoint(tmp_path / "checkpoint", config)
    sent = payload(checkpoint)
    assert (sent.route, sent.content_type, sent.kind) == (
        "/predict",
        "image/png",
        "image classifier",
    )
    assert len(set(sent.bodies)) == len(sent.bodies) > 1
    classifier = classifiers.load(checkpoint, torch.device("cpu"))
    (image,) = classifier.parse(sent.bodies[0], sent.content_type)
    assert isinstance(image, torch.Tensor) and tuple(image.shape) == (3, 12, 12)
    single, batched, batch = ceiling(checkpoint, sent, seconds=0.05)
    assert single > 0 and batched > 0 and batch == 64


def test_png_images_are_seeded() -> None:
    assert png_images(3, 8, seed=1) == png_images(3, 8, seed=1) != png_images(3, 8, seed=2)


def test_a_text_classifier_is_refused_in_its_own_words(tmp_path: Path) -> None:
    directory = tmp_path / "checkpoint"
    directory.mkdir()
    (directory / checkpoint_files.MODEL_FILE).write_bytes(b"")
    config = SupervisedConfig(dataset="synthetic_text", model="bert")
    state = {"epoch": 1, "config": config.to_dict()}
    (directory / checkpoint_files.STATE_FILE).write_text(json.dumps(state))
    with pytest.raises(NotBenchmarked, match="a text classifier"):
        payload(directory)


def test_the_report_gives_ratios_and_the_machines_load() -> None:
    from benchmarks.serve import FLOOR, Load, ServeBenchResult

    loads = [
        Load("batched", 64, 600, 0, 2.0, 90.0, 170.0),
        Load("unbatched", 64, 270, 0, 1.0, 200.0, 300.0),
        Load(FLOOR, 64, 950, 0, 1.0, 60.0, 80.0),
    ]
    machine_before = {"cpus": 2, "load_average_1m": 0.4}
    machine_after = {"cpus": 2, "load_average_1m": 3.5}
    result = ServeBenchResult(
        "ckpt", "policy", "serve", "asyncio", 32, loads, 1e4, 6e5, 64, machine_before, machine_after
    )
    report = result.report()
    assert "concurrency 64: batched 1.11x unbatched, 32% of the serve floor's requests/s" in report
    assert "1 round: no spread" in report and "concurrency 64, batched:" not in report
    assert report.endswith("load average before 0.4, after 3.5 on 2 CPUs")
    assert result.to_json()["machine_after"] == machine_after


def test_rounds_give_medians_with_their_spread_and_withhold_a_noisy_ratio() -> None:
    from benchmarks.serve import FLOOR, Load, ServeBenchResult

    def load(mode: str, concurrency: int, per_s: float, p99: float, round_: int) -> Load:
        return Load(mode, concurrency, int(per_s), 0, 1.0, p99 / 2, p99, 0.06, {}, round_)

    loads = []
    for round_, (batched, unbatched, floor) in enumerate(
        [(1650, 450, 2400), (1700, 420, 2500), (1600, 540, 2700)], start=1
    ):
        loads += [
            load("batched", 64, batched, 50 + round_, round_),
            load("unbatched", 64, unbatched, 150, round_),
            load(FLOOR, 64, floor, 38, round_),
            load("batched", 8, 1000, 11, round_),
            load("unbatched", 8, 500 + round_, 21, round_),
        ]
    machine = {"cpus": 2, "load_average_1m": 1.5}
    result = ServeBenchResult(
        "ckpt", "policy", "haproxy", "asyncio", 64, loads, 5e3, 3e5, 64, machine, machine, 3
    )
    report = result.report()
    assert "3 rounds (medians, spread min-max)" in report
    assert "concurrency 64, batched: 1650.0 req/s  (1600.0-1700.0), p50 26.0 ms" in report
    assert "p99 52.0 ms  (51.0-53.0)" in report
    # The unbatched rounds at 64 spread 120/450 = 27%: no ratio, said so.
    assert (
        "concurrency 64: batched / unbatched: rounds differ >25%, 66% of the serve floor's requests/s"
        in report
    )
    assert result.speedup(64) is None
    assert result.speedup(8) == pytest.approx(1000 / 502)
    assert "concurrency 8: batched 1.99x unbatched" in report
