"""Tiny image and text data sets in the real on-disk formats, written by the tests themselves."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
from PIL import Image

from rlsuite.supervised.text_data import TextExamples

CIFAR_PIXELS = 3 * 32 * 32


def write_cifar(directory: Path, per_batch: int = 8, seed: int = 0) -> Path:
    """`data_batch_1..5` and `test_batch` in CIFAR-10's python format: pickled dicts with
    b"data" (N x 3072 uint8, channel-major rows) and b"labels" (N ints in 0..9)."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for name in names:
        batch = {
            b"batch_label": name.encode(),
            b"data": rng.integers(0, 256, size=(per_batch, CIFAR_PIXELS), dtype=np.uint8),
            b"labels": [int(x) for x in rng.integers(0, 10, size=per_batch)],
            b"filenames": [f"{name}_{i}.png".encode() for i in range(per_batch)],
        }
        with (directory / name).open("wb") as file:
            pickle.dump(batch, file)
    return directory


def write_imagefolder(
    root: Path,
    classes: int = 2,
    per_class: int = 4,
    side: int = 20,
    val_per_class: int | None = None,
) -> Path:
    """`train/<class>/*.png` (`per_class` each) and `val/<class>/*.png` (`val_per_class`,
    default `per_class`); each class a different colour, widths varying."""
    rng = np.random.default_rng(0)
    counts = {"train": per_class, "val": per_class if val_per_class is None else val_per_class}
    for split, count in counts.items():
        for label in range(classes):
            folder = root / split / f"class_{label}"
            folder.mkdir(parents=True, exist_ok=True)
            for index in range(count):
                pixels = rng.integers(0, 64, size=(side, side + index % 8, 3), dtype=np.uint8)
                pixels[..., label % 3] += 150
                Image.fromarray(pixels).save(folder / f"{index}.png")
    return root


MNLI_HEADER = (
    "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
    "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label"
)


def write_sst2(directory: Path, train: TextExamples, dev: TextExamples) -> Path:
    """GLUE's SST-2 layout: train.tsv and dev.tsv with a `sentence<TAB>label` header."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, split in (("train.tsv", train), ("dev.tsv", dev)):
        lines = [
            "sentence\tlabel",
            *(f"{s}\t{y}" for s, y in zip(split.text_a, split.labels, strict=True)),
        ]
        (directory / name).write_text("\n".join(lines) + "\n")
    return directory


def write_mnli(directory: Path, rows: list[tuple[str, str, str]]) -> Path:
    """GLUE's MNLI layout (its twelve columns), the same rows in train and dev_matched."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [MNLI_HEADER]
    for index, (premise, hypothesis, label) in enumerate(rows):
        parse = "( x )"
        lines.append(
            f"{index}\t{index}\t{index}n\tfiction\t{parse}\t{parse}\t{parse}\t{parse}\t"
            f"{premise}\t{hypothesis}\t{label}\t{label}"
        )
    for name in ("train.tsv", "dev_matched.tsv"):
        (directory / name).write_text("\n".join(lines) + "\n")
    return directory
