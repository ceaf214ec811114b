"""Supervised checkpoints served: `POST /predict` answered with class probabilities.

Images (ResNet): the body is the PNG or JPEG file itself (any content type but JSON), or
JSON `{"images": ["<base64>", ...]}`. Each image goes through the validation transform of
the data set the model trained on, then the model; the answer is
`{"classes": [...], "probabilities": [[...], ...]}`. Text (BERT): `{"texts": ["a gripping
film", ...]}` (pairs as `[["premise", "hypothesis"], ...]`), tokenized by the checkpoint's
own tokenizer as in training; the answer is `{"labels": [...], "probabilities": [...]}`.
"""

from __future__ import annotations

import base64
import binascii
import io
from pathlib import Path
from typing import Any

import ray.train
import torch

from rlsuite.serving import inputs
from rlsuite.serving.inputs import BadRequest
from rlsuite.supervised import checkpoint as checkpoint_files
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.registry import dataset_entry

IMAGE_EXAMPLE = 'the PNG/JPEG bytes, or {"images": ["<base64>"]}'
TEXT_EXAMPLE = '{"texts": ["a gripping film"]}'


def load(checkpoint: Path, device: torch.device | None = None) -> ImageClassifier | TextClassifier:
    """The classifier a supervised checkpoint holds, by the task of its data set, on
    `device`: by default the replica's GPU when it has one (`--num-gpus`: Ray shows a
    replica only its own), else the CPU."""
    device = device or replica_device()
    config = SupervisedConfig.from_dict(checkpoint_files.read_state(checkpoint)["config"])
    if dataset_entry(config.dataset).task == "text":
        return TextClassifier(checkpoint, config, device)
    model, config = checkpoint_files.load_model(
        ray.train.Checkpoint.from_directory(str(checkpoint))
    )
    return ImageClassifier(model, config, device)


class ImageClassifier:
    route = "/predict"

    def __init__(
        self, model: torch.nn.Module, config: SupervisedConfig, device: torch.device
    ) -> None:
        self.device = device
        self.model, self.config = model.to(self.device), config
        self.transform = image_transform(config)

    def describe(self) -> dict[str, Any]:
        kind = f"image classifier ({self.config.model})"
        return {"kind": kind, "route": self.route, "device": str(self.device)}

    def parse(self, body: bytes, content_type: str) -> list[torch.Tensor]:
        if "json" not in content_type and not body.lstrip().startswith(b"{"):
            return [self._image(body, "the body")]
        images = inputs.field(inputs.json_object(body), "images", IMAGE_EXAMPLE)
        if not isinstance(images, list) or not images:
            raise BadRequest(
                f'"images" must be a non-empty list of base64 strings; send {IMAGE_EXAMPLE}'
            )
        return [self._image(_base64(image, i), f"images[{i}]") for i, image in enumerate(images)]

    def _image(self, data: bytes, where: str) -> torch.Tensor:
        return self.transform(decode_image(data, where))

    def answer(self, results: list[Any]) -> dict[str, Any]:
        return {
            "classes": [int(max(range(len(p)), key=p.__getitem__)) for p in results],
            "probabilities": results,
        }

    @torch.no_grad()
    def predict(self, images: list[torch.Tensor]) -> list[list[float]]:
        logits = self.model(torch.stack(images).to(self.device))
        return torch.softmax(logits.float(), dim=-1).cpu().tolist()


class TextClassifier:
    route = "/predict"

    def __init__(self, checkpoint: Path, config: SupervisedConfig, device: torch.device) -> None:
        from rlsuite.supervised.text import load_for_inference

        self.device = device
        model, self.tokenizer = load_for_inference(checkpoint)
        self.model, self.config = model.to(self.device), config

    def describe(self) -> dict[str, Any]:
        kind = f"text classifier ({self.config.model})"
        return {"kind": kind, "route": self.route, "device": str(self.device)}

    def parse(self, body: bytes, content_type: str) -> list[tuple[str, str | None]]:
        texts = inputs.field(inputs.json_object(body), "texts", TEXT_EXAMPLE)
        if not isinstance(texts, list) or not texts:
            raise BadRequest(
                f'"texts" must be a non-empty list of strings; send e.g. {TEXT_EXAMPLE}'
            )
        return [_text(text, i) for i, text in enumerate(texts)]

    def answer(self, results: list[Any]) -> dict[str, Any]:
        return {
            "labels": [int(max(range(len(p)), key=p.__getitem__)) for p in results],
            "probabilities": results,
        }

    @torch.no_grad()
    def predict(self, texts: list[tuple[str, str | None]]) -> list[list[float]]:
        """Single texts and pairs in a pass each: a dynamic batch mixes clients, and a
        single text encoded as a pair (text, "") gains a separator and other answers."""
        results: list[list[float]] = [[] for _ in texts]
        for pairs in (False, True):
            indices = [i for i, (_, b) in enumerate(texts) if (b is not None) == pairs]
            if indices:
                probabilities = self._probabilities([texts[i] for i in indices], pairs)
                for i, p in zip(indices, probabilities, strict=True):
                    results[i] = p
        return results

    def _probabilities(self, texts: list[tuple[str, str | None]], pairs: bool) -> list[list[float]]:
        encoded = self.tokenizer(
            [a for a, _ in texts],
            [b or "" for _, b in texts] if pairs else None,
            padding="max_length",  # as in training (text_model.EncodedText)
            truncation=True,
            max_length=self.config.max_seq_length,
            return_token_type_ids=True,
            return_attention_mask=True,
            return_tensors="pt",
        )
        logits = self.model(**encoded.to(self.device)).logits
        return torch.softmax(logits.float(), dim=-1).cpu().tolist()


def replica_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def image_transform(config: SupervisedConfig) -> Any:
    """uint8 CHW image -> the model's input: the validation transform of its data set."""
    from torchvision.transforms import v2

    if config.dataset == "imagefolder":
        from rlsuite.supervised.imagefolder import IMAGENET_MEAN, IMAGENET_STD, _transform

        normalize = [
            v2.ToDtype(torch.float32, scale=True),
            v2.Normalize(IMAGENET_MEAN, IMAGENET_STD),
        ]
        return v2.Compose([_transform(config, train=False), *normalize])
    from rlsuite.supervised.vision import cifar_transforms

    side = config.image_size
    return v2.Compose(
        [v2.Resize((side, side), antialias=True), cifar_transforms(config, train=False)]
    )


def decode_image(data: bytes, where: str) -> torch.Tensor:
    """PNG/JPEG bytes -> uint8 RGB tensor (C x H x W)."""
    from PIL import Image, UnidentifiedImageError
    from torchvision.transforms.v2 import functional

    try:
        with Image.open(io.BytesIO(data)) as image:
            rgb = image.convert("RGB")
    except Image.DecompressionBombError:  # PIL's own: no OSError or ValueError
        limit = 2 * (Image.MAX_IMAGE_PIXELS or 0)  # PIL raises past twice its warning size
        raise BadRequest(
            f"{where}: an image of more than {limit:,} pixels, which PIL refuses to decode; send a smaller one"
        ) from None
    except (UnidentifiedImageError, OSError, ValueError) as error:
        reason = str(error).splitlines()[0][:80] if str(error) else type(error).__name__
        raise BadRequest(f"{where}: not a decodable PNG or JPEG image ({reason})") from None
    tensor: torch.Tensor = functional.pil_to_tensor(rgb)
    return tensor


def _base64(value: Any, index: int) -> bytes:
    if not isinstance(value, str):
        raise BadRequest(f"images[{index}]: expected a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"images[{index}]: not valid base64") from None


def _text(value: Any, index: int) -> tuple[str, str | None]:
    if isinstance(value, str) and value.strip():
        return value, None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return value[0], value[1]
    raise BadRequest(f"texts[{index}]: expected a non-empty string or a [premise, hypothesis] pair")
