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
    assert report.endswith("load average before 0.4, after 3.5 on 2 CPUs")
    assert result.to_json()["machine_after"] == machine_after
