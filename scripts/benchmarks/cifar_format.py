"""A small data set in CIFAR-10's python format, of learnable images: what the benchmark
table's `resnet18_cifar_format` row trains on (`python scripts/write_cifar_format.py`).

CIFAR-10 itself is not on a 2-CPU benchmark machine, and nothing is ever downloaded, yet
the row should read files through the suite's cifar10 loader (its pickled batches, its
crops, flips and normalisation) rather than the in-memory synthetic set. So the images are
the suite's own synthetic task (`rlsuite.supervised.vision.SyntheticImages`: a fixed smooth
pattern per class plus noise of the pattern's scale) at CIFAR's 32x32 and 10 classes,
stored as CIFAR stores its images; a validation accuracy above chance is learning. The same
arguments write the same bytes.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np

from rlsuite.flags import Parser, non_negative_int, positive_int
from rlsuite.supervised import SupervisedConfig
from rlsuite.supervised.vision import (
    CIFAR_CLASSES,
    CIFAR_SIDE,
    CIFAR_TEST,
    CIFAR_TRAIN,
    load_synthetic,
)

PICKLE_PROTOCOL = 4
"""Fixed, so that the bytes do not change with Python's default protocol."""
GREY_LEVELS_PER_UNIT = 32
"""uint8 levels per unit of the generator's scale (its noise has a standard deviation of
1): 128 +- 4 units fill 0-255, so about 0.2% of the pixels clip, and a level is 1/32 of the
noise."""


def write_cifar_format(directory: Path, train_images: int, test_images: int, seed: int = 0) -> Path:
    """`data_batch_1..5` (the training images, split evenly) and `test_batch` (the
    validation images) in `directory`, each a pickled dict with b"data" (N x 3072 uint8,
    channel-major rows) and b"labels" (N ints in 0..9), as CIFAR-10's python version has
    them. `seed` picks the class patterns and the noise (SupervisedConfig.seed)."""
    config = SupervisedConfig(
        dataset="synthetic_images",
        num_classes=CIFAR_CLASSES,
        image_size=CIFAR_SIDE,
        seed=seed,
        synthetic_train_size=train_images,
        synthetic_val_size=test_images,
    )
    splits = load_synthetic(config)  # validation images are other noise draws than training's
    train_pixels, train_labels = _as_cifar_rows(splits.train)
    directory.mkdir(parents=True, exist_ok=True)
    parts = np.array_split(np.arange(train_images), len(CIFAR_TRAIN))
    for name, indices in zip(CIFAR_TRAIN, parts, strict=True):
        _write_batch(directory / name, train_pixels[indices], train_labels[indices])
    _write_batch(directory / CIFAR_TEST, *_as_cifar_rows(splits.validation))
    return directory


def _as_cifar_rows(images: Any) -> tuple[np.ndarray, np.ndarray]:
    """A torch data set of (float C x H x W image, label) items as CIFAR's uint8 rows and
    labels."""
    items = [images[index] for index in range(len(images))]
    pixels = np.stack([image.numpy() for image, _ in items])
    grey = np.clip(np.rint(128 + GREY_LEVELS_PER_UNIT * pixels), 0, 255).astype(np.uint8)
    labels = np.array([int(label) for _, label in items], dtype=np.int64)
    return grey.reshape(len(items), -1), labels


def _write_batch(path: Path, pixels: np.ndarray, labels: np.ndarray) -> None:
    batch = {
        b"batch_label": path.name.encode(),
        b"data": pixels,
        b"labels": [int(label) for label in labels],
    }
    with path.open("wb") as file:
        pickle.dump(batch, file, protocol=PICKLE_PROTOCOL)


def build_parser() -> Parser:
    parser = Parser(
        prog="python scripts/write_cifar_format.py",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("directory", type=Path, help="where the batches go (made if missing)")
    parser.add_argument("--train-images", type=positive_int, required=True)
    parser.add_argument("--test-images", type=positive_int, required=True)
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="class patterns and noise (default 0)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    written = write_cifar_format(args.directory, args.train_images, args.test_images, args.seed)
    print(
        f"CIFAR-10 format: {written} ({args.train_images} training, {args.test_images} test images)"
    )
    return 0
