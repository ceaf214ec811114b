"""Image classification: torchvision ResNets, CIFAR-10 from its python batches, synthetic
images. (ImageFolder through Ray Data is in `imagefolder.py`.) Nothing is downloaded.

Data set and model functions follow the contract in `rlsuite.supervised.registry`.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import torch
import torchvision
from torch.utils.data import Dataset
from torchvision.transforms import v2

from rlsuite.errors import UsageError
from rlsuite.supervised.batches import check_steps
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.registry import Splits, data_dir

CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)
CIFAR_SIDE = 32
CIFAR_TEST = "test_batch"
CIFAR_TRAIN = tuple(f"data_batch_{i}" for i in range(1, 6))
CIFAR_CLASSES = 10
CIFAR_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"

__all__ = [
    "build_resnet18",
    "build_resnet50",
    "check_cifar10",
    "check_synthetic",
    "load_cifar10",
    "load_synthetic",
]


# --- models


def build_resnet18(config: SupervisedConfig, **_: Any) -> torch.nn.Module:
    return _resnet(torchvision.models.resnet18, config)


def build_resnet50(config: SupervisedConfig, **_: Any) -> torch.nn.Module:
    return _resnet(torchvision.models.resnet50, config)


def _resnet(builder: Any, config: SupervisedConfig) -> torch.nn.Module:
    model: torchvision.models.ResNet = builder(weights=None, num_classes=config.num_classes)
    if config.cifar_stem:
        # 32x32 inputs: the ImageNet stem (7x7 stride 2, then max-pool) would leave 8x8
        # maps before the first block; CIFAR ResNets use one 3x3 stride-1 convolution.
        model.conv1 = torch.nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
        model.maxpool = torch.nn.Identity()
    return model


# --- CIFAR-10


class TransformedImages(Dataset):
    """uint8 images (N x C x H x W) with labels, each passed through a torchvision transform."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, transform: v2.Transform):
        self.images, self.labels, self.transform = images, labels, transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.transform(self.images[index]), self.labels[index]


def cifar_transforms(config: SupervisedConfig, *, train: bool) -> v2.Transform:
    """torchvision's CIFAR recipe: random 4-pixel-padded crop and flip for training."""
    steps: list[v2.Transform] = []
    if config.image_size != CIFAR_SIDE:
        steps.append(v2.Resize(config.image_size, antialias=True))
    if train:
        steps += [
            v2.RandomCrop(config.image_size, padding=config.image_size // 8),
            v2.RandomHorizontalFlip(),
        ]
    steps += [v2.ToDtype(torch.float32, scale=True), v2.Normalize(CIFAR_MEAN, CIFAR_STD)]
    return v2.Compose(steps)


def check_cifar10(config: SupervisedConfig) -> None:
    directory = data_dir(config, "the extracted cifar-10-batches-py directory")
    missing = [name for name in (*CIFAR_TRAIN, CIFAR_TEST) if not (directory / name).is_file()]
    if missing:
        # A partial set would train on part of the data without a word.
        raise UsageError(
            f"cifar10: {directory} lacks {', '.join(missing)} (CIFAR-10 has data_batch_1 to "
            f"data_batch_5 and {CIFAR_TEST}); set data_path to the cifar-10-batches-py "
            f"directory extracted from {CIFAR_URL}"
        )
    if config.num_classes != CIFAR_CLASSES:  # else a label out of range in the first batch
        raise UsageError(
            f"cifar10 has {CIFAR_CLASSES} classes but num_classes is {config.num_classes}; "
            f"--set num_classes={CIFAR_CLASSES}"
        )
    # The format check, here rather than in the trial.
    rows = sum(len(_read_batch(directory / name)[1]) for name in CIFAR_TRAIN)
    _read_batch(directory / CIFAR_TEST)
    check_steps(rows, config, config.max_workers or config.num_workers)


def load_cifar10(config: SupervisedConfig) -> Splits:
    directory = Path(str(config.data_path)).expanduser()
    train = [_read_batch(path) for path in _train_files(directory)]
    images = torch.cat([images for images, _ in train])
    labels = torch.cat([labels for _, labels in train])
    test_images, test_labels = _read_batch(directory / CIFAR_TEST)
    return Splits(
        train=TransformedImages(images, labels, cifar_transforms(config, train=True)),
        validation=TransformedImages(
            test_images, test_labels, cifar_transforms(config, train=False)
        ),
    )


def _train_files(directory: Path) -> list[Path]:
    return [directory / name for name in CIFAR_TRAIN]


def _read_batch(path: Path) -> tuple[torch.Tensor, torch.Tensor]:
    """One CIFAR python batch: a pickled dict with b"data" (N x 3072 uint8, channel-major)
    and b"labels" (N ints)."""
    try:
        with path.open("rb") as file:
            batch = pickle.load(file, encoding="bytes")
        data, labels = batch[b"data"], batch[b"labels"]
        images = torch.as_tensor(data, dtype=torch.uint8).reshape(-1, 3, CIFAR_SIDE, CIFAR_SIDE)
    except (pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError, RuntimeError):
        raise UsageError(
            f"cifar10: {path} is not a CIFAR-10 python batch (a pickled dict with b'data' of "
            f"N x 3072 bytes and b'labels'); use the python version from {CIFAR_URL}"
        ) from None
    return images, torch.as_tensor(labels, dtype=torch.int64)


# --- synthetic images


class SyntheticImages(Dataset):
    """A learnable image task without files: each class has a fixed smooth colour pattern;
    an image is its class's pattern plus Gaussian noise of the same scale, drawn anew per
    index (validation images are unseen noise draws, so accuracy measures learning)."""

    def __init__(self, config: SupervisedConfig, size: int, offset: int):
        generator = torch.Generator().manual_seed(config.seed)
        coarse = torch.randn(config.num_classes, 3, 4, 4, generator=generator)
        side = config.image_size
        self.patterns = torch.nn.functional.interpolate(coarse, size=(side, side), mode="bilinear")
        self.size, self.offset, self.seed = size, offset, config.seed
        self.num_classes = config.num_classes

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        label = index % self.num_classes
        noise_seed = (self.seed + 1) * 1_000_003 + self.offset + index
        generator = torch.Generator().manual_seed(noise_seed)
        pattern = self.patterns[label]
        image = pattern + torch.randn(pattern.shape, generator=generator)
        return image, torch.tensor(label, dtype=torch.int64)


def check_synthetic(config: SupervisedConfig) -> None:
    if config.synthetic_train_size < 1 or config.synthetic_val_size < 1:
        raise UsageError(
            "synthetic data: synthetic_train_size and synthetic_val_size must be at least 1"
        )
    check_steps(config.synthetic_train_size, config, config.max_workers or config.num_workers)


def load_synthetic(config: SupervisedConfig) -> Splits:
    return Splits(
        train=SyntheticImages(config, config.synthetic_train_size, offset=0),
        validation=SyntheticImages(
            config, config.synthetic_val_size, offset=config.synthetic_train_size
        ),
    )
