"""What bench_serve sends and what it compares with, by the kind of checkpoint served.

A policy (`POST /act`): one observation per request as JSON, sampled from the module's
observation space; the ceiling is the RLModule's `forward_inference` in this process. An
image classifier (`POST /predict`): one PNG per request, random pixels at the side the
model trained on (what a client uploads; the server decodes and transforms it); the
ceiling is the classifier's forward pass on already transformed images, the part of a
request that batching can share. Text classifiers are not benchmarked here.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

COUNT = 256
"""Distinct request bodies, sent round-robin."""
CEILING_BATCH = 64


class NotBenchmarked(ValueError):
    """A checkpoint bench_serve has no requests for."""


@dataclass(frozen=True)
class Payload:
    kind: str
    """policy or image classifier."""
    route: str
    content_type: str
    bodies: list[bytes]
    unit: str
    """What one request carries, for the report: observation or image."""


def payload(checkpoint: Path) -> Payload:
    from rlsuite.evaluation.locate import is_supervised_checkpoint

    if is_supervised_checkpoint(checkpoint):
        return _images(checkpoint)
    from rlsuite.evaluation.policy import load_module
    from rlsuite.rl import export

    observations = export.sample_observations(load_module(checkpoint), COUNT, seed=0).tolist()
    bodies = [json.dumps({"observations": [obs]}).encode() for obs in observations]
    return Payload("policy", "/act", "application/json", bodies, "observation")


def _images(checkpoint: Path) -> Payload:
    from rlsuite.supervised import checkpoint as checkpoint_files
    from rlsuite.supervised.config import SupervisedConfig
    from rlsuite.supervised.registry import dataset_entry

    config = SupervisedConfig.from_dict(checkpoint_files.read_state(checkpoint)["config"])
    if dataset_entry(config.dataset).task == "text":
        raise NotBenchmarked(
            f"{checkpoint}: a text classifier; bench_serve sends observations or images"
        )
    return Payload(
        "image classifier",
        "/predict",
        "image/png",
        png_images(COUNT, config.image_size, seed=0),
        "image",
    )


def png_images(count: int, side: int, seed: int) -> list[bytes]:
    """`count` PNG files of `side` x `side` random RGB pixels."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = []
    for _ in range(count):
        pixels = rng.integers(0, 256, size=(side, side, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG")
        images.append(buffer.getvalue())
    return images


def ceiling(checkpoint: Path, sent: Payload, seconds: float = 2.0) -> tuple[float, float, int]:
    """Inputs per second in this process's forward passes: one input each, and
    CEILING_BATCH each, on one torch thread, as a replica of one CPU computes (Ray sets
    its OMP_NUM_THREADS to the replica's CPUs, `--num-cpus` 1 by default)."""
    import torch

    torch.set_num_threads(1)
    forward = (_image_forward if sent.route == "/predict" else _policy_forward)(checkpoint, sent)
    rates = []
    for size in (1, CEILING_BATCH):
        with torch.no_grad():
            forward(size)  # warm-up: the first call of a size sets up torch's kernels
            calls, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                forward(size)
                calls += 1
        rates.append(calls * size / (time.perf_counter() - start))
    return rates[0], rates[1], CEILING_BATCH


def _policy_forward(checkpoint: Path, sent: Payload) -> Callable[[int], object]:
    import torch
    from ray.rllib.core.columns import Columns

    from rlsuite.evaluation.policy import load_module

    module = load_module(checkpoint)
    rows = [json.loads(body)["observations"][0] for body in sent.bodies]
    observations = torch.as_tensor(np.array(rows, dtype=np.float32))
    return lambda size: module.forward_inference({Columns.OBS: observations[:size]})


def _image_forward(checkpoint: Path, sent: Payload) -> Callable[[int], object]:
    import torch

    from rlsuite.serving import classifiers

    classifier = classifiers.load(checkpoint, torch.device("cpu"))
    assert isinstance(classifier, classifiers.ImageClassifier)  # payload() sends no text
    images = [classifier.parse(body, sent.content_type)[0] for body in sent.bodies]
    return lambda size: classifier.predict(images[:size])
