"""ImageNet-style class-per-folder images through Ray Data, sharded across Train workers.

Layout: `data_path/train/<class>/<image>` and `data_path/val/<class>/<image>` (ImageNet's
validation images sorted into class folders, as torchvision's ImageFolder expects). Ray
Data reads and decodes the files in parallel tasks (on any node of a cluster), takes the
class from the folder name with its directory `Partitioning`, applies torchvision's
transforms there, and Ray Train hands every worker its shard (`get_dataset_shard`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlsuite.errors import UsageError
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.registry import Splits, data_dir

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "JPEG", "bmp")
SPLIT_DIRS = ("train", "val")
RESIZE_RATIO = 256 / 224  # validation: resize the short side to 256, centre-crop 224
LAYOUT = "a directory with train/<class>/*.jpg and val/<class>/*.jpg"


def check_imagefolder(config: SupervisedConfig) -> None:
    root = data_dir(config, LAYOUT)
    classes = {}
    for split in SPLIT_DIRS:
        classes[split] = class_names(root / split)
        if not any(_images(root / split / name) for name in classes[split]):
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


def class_names(split_dir: Path) -> list[str]:
    """Sorted class folder names (their index is the label, as in torchvision's ImageFolder)."""
    if not split_dir.is_dir():
        raise UsageError(f"imagefolder: no {split_dir} directory; data_path must be {LAYOUT}")
    names = sorted(p.name for p in split_dir.iterdir() if p.is_dir())
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
        file_extensions=[e.lower() for e in IMAGE_EXTENSIONS],
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


def _images(directory: Path) -> bool:
    return any(p.suffix.lstrip(".") in IMAGE_EXTENSIONS for p in directory.iterdir())


def _count_images(directory: Path) -> int:
    return sum(1 for p in directory.iterdir() if p.suffix.lstrip(".") in IMAGE_EXTENSIONS)
