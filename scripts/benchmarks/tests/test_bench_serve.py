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
