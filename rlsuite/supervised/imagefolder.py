"""ImageNet-style class-per-folder images through Ray Data, sharded across Train workers.

Layout: `data_path/train/<class>/<image>` and `data_path/val/<class>/<image>` (ImageNet's
validation images sorted into class folders, as torchvision's ImageFolder expects). Ray
Data reads and decodes the files in parallel tasks (on any node of a cluster), takes the
class from the folder name with its directory `Partitioning`, applies torchvision's
transforms there, and Ray Train hands every worker its shard (`get_dataset_shard`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlsuite.errors import UsageError
from rlsuite.supervised.batches import check_steps
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.registry import Splits, data_dir

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "bmp")
"""Image file suffixes, in any case (.JPEG, .JPG)."""
READ_EXTENSIONS = frozenset(IMAGE_EXTENSIONS)
SPLIT_DIRS = ("train", "val")
RESIZE_RATIO = 256 / 224  # validation: resize the short side to 256, centre-crop 224
LAYOUT = "a directory with train/<class>/*.jpg and val/<class>/*.jpg"


def check_imagefolder(config: SupervisedConfig) -> None:
    root = data_dir(config, LAYOUT)
    classes = {}
    for split in SPLIT_DIRS:
        classes[split] = class_names(root / split)
        _check_flat(root / split, classes[split])
        if not any(_count_images(root / split / name) for name in classes[split]):
            raise UsageError(
                f"imagefolder: {root / split} holds no images ({', '.join(IMAGE_EXTENSIONS)}); "
                f"data_path must be {LAYOUT}"
            )
    if classes["val"] != classes["train"]:
        raise UsageError(
            f"imagefolder: {root}/val has other class folders than {root}/train; "
            "sort the validation images into the training set's class folders"
        )
    if len(classes["train"]) != config.num_classes:
        raise UsageError(
            f"imagefolder: {root}/train has {len(classes['train'])} class folders but "
            f"num_classes is {config.num_classes}; --set num_classes={len(classes['train'])}"
        )
    _check_optimizer_steps(root / "train", classes["train"], config)


def _check_optimizer_steps(train_dir: Path, classes: list[str], config: SupervisedConfig) -> None:
    """An epoch must make an optimizer step (`batches.check_steps`, which the Train workers
    would raise once Ray runs); counting stops at the images one step needs."""
    counts = {config.num_workers, config.max_workers or config.num_workers}  # elastic: both
    enough = max(
        n * config.replace(num_workers=n).per_worker_batch_size * config.grad_accum_steps
        for n in counts
    )
    seen = 0
    for name in classes:
        seen += _count_images(train_dir / name)
        if seen >= enough:
            return
    for workers in sorted(counts):
        check_steps(seen, config, workers)


def class_names(split_dir: Path) -> list[str]:
    """Sorted class folder names (their index is the label, as in torchvision's ImageFolder)."""
    if not split_dir.is_dir():
        raise UsageError(f"imagefolder: no {split_dir} directory; data_path must be {LAYOUT}")
    names = sorted(p.name for p in split_dir.iterdir() if p.is_dir() and not _hidden(p))
    if not names:
        raise UsageError(
            f"imagefolder: {split_dir} has no class folders; data_path must be {LAYOUT}"
        )
    return names


def load_imagefolder(config: SupervisedConfig) -> Splits:
    """Runs in the trial's driver: Ray Datasets of (CHW uint8 image, label) rows."""
    root = Path(str(config.data_path)).expanduser()
    classes = class_names(root / "train")
    return Splits(
        train=_read(root / "train", classes, config, train=True),
        validation=_read(root / "val", classes, config, train=False),
        collate_fn=normalized_batch,
        train_size=sum(_count_images(root / "train" / name) for name in classes),
    )


def _read(directory: Path, classes: list[str], config: SupervisedConfig, *, train: bool) -> Any:
    import ray.data
    from ray.data import FileShuffleConfig
    from ray.data.datasource.partitioning import Partitioning, PartitionStyle

    index = {name: i for i, name in enumerate(classes)}
    transform = _transform(config, train=train)

    def to_row(row: dict[str, Any]) -> dict[str, Any]:
        image = torch.from_numpy(np.ascontiguousarray(row["image"])).permute(2, 0, 1)
        return {"image": transform(image).numpy(), "label": index[row["class"]]}

    images = ray.data.read_images(
        str(directory),
        mode="RGB",
        partitioning=Partitioning(
            PartitionStyle.DIRECTORY, base_dir=str(directory), field_names=["class"]
        ),
        file_extensions=list(IMAGE_EXTENSIONS),
        # Ray lists the files sorted, so without this every epoch would stream the classes
        # one after another (ImageNet: ~1,300 images a class against a shuffle buffer of
        # 4,096 rows). A new file order per epoch (each epoch executes the read again),
        # seeded from the trial's seed.
        shuffle=FileShuffleConfig(seed=config.seed, reseed_after_execution=True) if train else None,
    )
    return images.map(to_row)


def _transform(config: SupervisedConfig, *, train: bool) -> Any:
    """torchvision's ImageNet recipe on uint8 CHW tensors (normalised later, on the worker)."""
    from torchvision.transforms import v2

    side = config.image_size
    if train:
        return v2.Compose([v2.RandomResizedCrop(side, antialias=True), v2.RandomHorizontalFlip()])
    return v2.Compose([v2.Resize(round(side * RESIZE_RATIO), antialias=True), v2.CenterCrop(side)])


def normalized_batch(batch: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """A Ray Data batch -> (normalised float images, labels); runs in the Train worker."""
    images = torch.from_numpy(batch["image"]).float().div_(255)
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return (images - mean) / std, torch.from_numpy(batch["label"]).long()


def _check_flat(split_dir: Path, classes: list[str]) -> None:
    """Ray's directory partitioning takes a file's class from exactly one folder level:
    an image beside the class folders has no class, and one in a subfolder of a class
    folder fails the read, both inside the trial. Refused here instead."""
    loose = next((p for p in _files(split_dir) if _is_image(p)), None)
    if loose is not None:
        raise UsageError(
            f"imagefolder: {loose} is not in a class folder; move it into {split_dir}/<class>/"
        )
    for name in classes:
        with os.scandir(split_dir / name) as entries:  # no stat per file: ImageNet has 1.3M
            nested = next((e.path for e in entries if e.is_dir()), None)
        if nested is not None:
            raise UsageError(
                f"imagefolder: {nested} is a folder inside a class folder; put the class's "
                f"images directly in {split_dir / name}"
            )


def _files(directory: Path) -> list[Path]:
    with os.scandir(directory) as entries:
        return [Path(e.path) for e in entries if e.is_file()]


def _is_image(path: Path) -> bool:
    # Ray Data matches extensions regardless of case (.JPG, .Png): count as it reads.
    return path.suffix.lstrip(".").lower() in READ_EXTENSIONS


def _hidden(path: Path) -> bool:
    """Ray Data's listing skips paths whose part below the folder it reads starts with "."
    or "_" (a class folder such as .ipynb_checkpoints): counted, it would be a class it
    never reads. Files inside a class folder are read whatever their names."""
    return path.name.startswith((".", "_"))


def _count_images(directory: Path) -> int:
    return sum(1 for p in _files(directory) if _is_image(p))
