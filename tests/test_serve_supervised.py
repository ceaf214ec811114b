"""`python -m rlsuite.serve` on classifier checkpoints, deployed with `--address` on a running
Ray cluster (this file's `ray_cluster`): a ResNet's and a tiny BERT's probabilities over
HTTP equal those of the model `rlsuite.evaluate` restores on the same inputs, bad
requests are one line with HTTP 400 while the server keeps serving, and a second server on
a cluster where Serve already runs is refused in one line. The checkpoints are
conftest's `cifar_sweep` and `sst2_sweep`, which other tests read too."""

from __future__ import annotations

import base64
import io
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import ray.train
import torch
from torch.utils.data import DataLoader

from rlsuite.evaluation.locate import locate
from rlsuite.serving.classifiers import TextClassifier, decode_image
from rlsuite.serving.inputs import BadRequest
from rlsuite.supervised import registry, text
from rlsuite.supervised.checkpoint import MODEL_FILE, load_model
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.loop import logits_of
from rlsuite.supervised.text_data import SST2, read_glue
from rlsuite.supervised.vision import cifar_transforms
from tests.helpers import ROOT, SupervisedSweep
from tests.ports import free_port
from tests.ray_nodes import RayCluster
from tests.serve_client import request, serving

TEXTS = 8


def _restored(checkpoint: Path) -> tuple[torch.nn.Module, SupervisedConfig]:
    model, config = load_model(ray.train.Checkpoint.from_directory(str(checkpoint)))
    return model.eval(), config


def test_image_classifier_on_a_cluster(
    cifar_sweep: SupervisedSweep, ray_cluster: RayCluster, tmp_path: Path
) -> None:
    join = ("--address", ray_cluster.address)
    check_image_classifier(cifar_sweep.experiment_dir, tmp_path, *join, env=ray_cluster.env)


def check_image_classifier(
    results: Path,
    tmp_path: Path,
    *flags: str,
    env: dict[str, str] | None = None,
    atol: float = 1e-5,
) -> None:
    """`results`' best checkpoint served (with `flags`) answers PNGs, raw and in base64, as
    the restored model on the CPU does, and bad images with one-line 400s."""
    from PIL import Image

    checkpoint = locate(results).checkpoint
    model, config = _restored(checkpoint)
    side = config.image_size
    pixels = np.random.default_rng(0).integers(0, 256, (2, side, side, 3), dtype=np.uint8)
    pngs = []
    for image in pixels:
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG")
        pngs.append(buffer.getvalue())
    transform = cifar_transforms(config, train=False)
    inputs = torch.stack([transform(torch.from_numpy(p).permute(2, 0, 1)) for p in pixels])
    with torch.no_grad():
        expected = torch.softmax(model(inputs), dim=-1).numpy()
    gpu = "--num-gpus" in flags
    with serving(results, tmp_path / "logs", *flags, env=env) as port:
        assert request(port, "GET", "/ready")[1]["device"] == ("cuda" if gpu else "cpu")
        status, answer = request(port, "POST", "/predict", pngs[0], "image/png")
        assert status == 200
        np.testing.assert_allclose(answer["probabilities"], expected[:1], atol=atol)
        b64 = {"images": [base64.b64encode(p).decode() for p in pngs]}
        status, answer = request(port, "POST", "/predict", json.dumps(b64).encode())
        assert status == 200 and answer["classes"] == expected.argmax(-1).tolist()
        np.testing.assert_allclose(answer["probabilities"], expected, atol=atol)
        for body, needle in (
            (b"not an image", "not a decodable PNG or JPEG"),
            (b'{"images": []}', "non-empty list"),
            (b'{"images": ["***"]}', "not valid base64"),
        ):
            content_type = "application/json" if body[:1] == b"{" else "application/octet-stream"
            status, answer = request(port, "POST", "/predict", body, content_type)
            assert status == 400 and needle in answer["error"], answer
            assert request(port, "POST", "/predict", pngs[0], "image/png")[0] == 200


def test_text_classifier_on_a_cluster(
    sst2_sweep: SupervisedSweep, ray_cluster: RayCluster, tmp_path: Path
) -> None:
    """Sentences sent as text are tokenized in the replica as in training: the served
    probabilities of the first dev sentences equal the model's on the evaluation split."""
    checkpoint = locate(sst2_sweep.experiment_dir).checkpoint
    model, config = _restored(checkpoint)
    splits = registry.load(config, ray.train.Checkpoint.from_directory(str(checkpoint)))
    loader = DataLoader(splits.validation, batch_size=TEXTS, collate_fn=splits.collate_fn)
    inputs, _ = next(iter(loader))
    with torch.no_grad():
        expected = torch.softmax(logits_of(model, inputs).float(), dim=-1).numpy()
    sentences = read_glue(SST2, sst2_sweep.data).validation.text_a[:TEXTS]
    join = ("--address", ray_cluster.address)
    # Replicas the cluster can never place (serve.run waited for them for ever): refused.
    refused = _refused(sst2_sweep.experiment_dir, ray_cluster, "--num-cpus", "1000")
    assert "need 1000 CPUs but the cluster has" in refused, refused
    with serving(sst2_sweep.experiment_dir, tmp_path / "logs", *join, env=ray_cluster.env) as port:
        ready = request(port, "GET", "/ready")[1]
        assert (ready["kind"], ready["device"]) == ("text classifier (bert)", "cpu")
        body = json.dumps({"texts": list(sentences)}).encode()
        status, answer = request(port, "POST", "/predict", body)
        assert status == 200, answer
        np.testing.assert_allclose(answer["probabilities"], expected, atol=1e-5)
        assert answer["labels"] == expected.argmax(-1).tolist()
        for payload, needle in (
            ({"texts": []}, "non-empty list"),
            ({"texts": [7]}, "texts[0]: expected a non-empty string"),
            ({"sentences": ["a"]}, '"texts"'),
        ):
            status, answer = request(port, "POST", "/predict", json.dumps(payload).encode())
            assert status == 400 and needle in answer["error"], answer
            assert "\n" not in answer["error"]
            one = json.dumps({"texts": [sentences[0]]}).encode()
            status, answer = request(port, "POST", "/predict", one)
            assert status == 200
            np.testing.assert_allclose(answer["probabilities"], expected[:1], atol=1e-5)
        # A second server on this cluster, where Serve runs already: it would keep this
        # one's proxy (ignoring its --port) and shut this one's app down on exit. Refused in
        # one line; this one keeps serving.
        refused = _refused(sst2_sweep.experiment_dir, ray_cluster)
        assert "Ray Serve already runs on the cluster" in refused, refused
        assert "(applications: rlsuite)" in refused, refused
        assert request(port, "POST", "/predict", one)[0] == 200


def _refused(results: Path, ray_cluster: RayCluster, *flags: str) -> str:
    """The one line of a server that joins `ray_cluster` and is refused (exit 2)."""
    command = [sys.executable, "-m", "rlsuite.serve", str(results), "--port", str(free_port())]
    server = subprocess.run(
        [*command, "--address", ray_cluster.address, *flags],
        capture_output=True,
        text=True,
        timeout=300,
        env=ray_cluster.env,
        cwd=ROOT,
    )
    errors = [line for line in server.stderr.splitlines() if line.strip()]
    assert server.returncode == 2 and len(errors) == 1, server.stderr[-2000:]
    return errors[0]


def test_an_image_of_too_many_pixels_is_a_bad_request() -> None:
    """PIL refuses to decode a decompression bomb with its own exception, neither an
    OSError nor a ValueError: it was HTTP 500."""
    header = struct.pack(">IIBBBBB", 20_000, 20_000, 1, 0, 0, 0, 0)  # 1-bit grey
    png = b"\x89PNG\r\n\x1a\n" + b"".join(
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        for kind, data in ((b"IHDR", header), (b"IDAT", zlib.compress(b"")), (b"IEND", b""))
    )  # the pixels never come: PIL refuses the size it reads first
    with pytest.raises(BadRequest) as refused:
        decode_image(png, "the body")
    message = str(refused.value)
    assert message.startswith("the body: an image of more than") and "\n" not in message


def test_single_texts_answer_alike_batched_with_pairs(tmp_path: Path) -> None:
    """A dynamic batch mixes clients: a single text batched with another client's pair was
    encoded as the pair (text, "") and answered otherwise than alone."""
    config = SupervisedConfig(
        model="bert", dataset="synthetic_text", num_classes=2, model_size="tiny",
        max_seq_length=16, synthetic_train_size=64, synthetic_val_size=8,
    )  # fmt: skip
    splits = text.load_synthetic(config, None)
    assert splits.save_extras is not None
    splits.save_extras(str(tmp_path))  # the tokenizer and the model's config, as a trial saves
    torch.manual_seed(0)
    torch.save(text.build_bert(config, **splits.model_kwargs).state_dict(), tmp_path / MODEL_FILE)
    classifier = TextClassifier(tmp_path, config, torch.device("cpu"))
    single, pair = ("a gripping film", None), ("a gripping film", "an awful plot")
    alone = classifier.predict([single]) + classifier.predict([pair])
    np.testing.assert_allclose(classifier.predict([single, pair]), alone, atol=1e-6)
    np.testing.assert_allclose(classifier.predict([pair, single]), alone[::-1], atol=1e-6)
