"""Supervised data sets and models by name: plain dicts of lazily imported functions.

The contract a data set or model module implements (vision.py and text.py do):

**Data set** — a `DatasetEntry` in `DATASETS` naming functions of one module:

- `check(config: SupervisedConfig) -> None` runs in the launcher before Ray starts and
  raises `rlsuite.errors.UsageError` (one line: the problem and the fix) for a missing,
  empty or wrongly formatted `config.data_path`. Cheap: look at files, do not load them.
- `load(config: SupervisedConfig) -> Splits` builds the training and validation splits.
  For `ray_data=False` entries it runs inside every Ray Train worker and returns
  `torch.utils.data.Dataset`s (the loop wraps them in a DataLoader with a
  DistributedSampler through `ray.train.torch.prepare_data_loader`). For `ray_data=True`
  entries it runs once in the trial's driver and returns `ray.data.Dataset`s, which
  Ray Train shards across workers (`ray.train.get_dataset_shard`).
- `synthetic`: the learnable synthetic data set `--smoke` switches to (same task, no files).
- `reuses_checkpoint` entries learn preprocessing from the data (a tokenizer's WordPiece
  vocabulary, which `tokenizers` does not learn deterministically): their `load` takes a
  second argument, the `ray.train.Checkpoint` the run starts from (None on a fresh
  start), and reuses what `save_extras` wrote there, so restored weights (`--resume`, a
  PBT exploit) meet the token ids they were trained with.

**Batches.** Every batch the loop sees is `(inputs, labels)`: `inputs` a Tensor (images,
N x C x H x W float) or a dict of Tensors (`input_ids`, `attention_mask`, ...), `labels` an
int64 Tensor of class indices. For torch data sets, `Splits.collate_fn` makes that batch
from a list of items (None: the default collate of `(input, label)` pairs). For Ray Data,
`Splits.collate_fn` maps the dict of numpy arrays `iter_torch_batches` yields to it
(after `Splits.train_transform` in the worker, see below).

**Model** — `MODELS[name]` is `"module:function"` with
`build(config: SupervisedConfig, **model_kwargs) -> torch.nn.Module`, where
`model_kwargs` is `Splits.model_kwargs` (what the data decides, e.g. `vocab_size` of a
tokenizer trained on the training text). The loop calls `model(inputs)` for a Tensor and
`model(**inputs)` for a dict; the output is the logits Tensor or an object with `.logits`
(transformers' `SequenceClassifierOutput`). Loss: cross-entropy on the logits.

**Checkpoints** hold `model.pt` (the unwrapped model's state dict), `optimizer.pt`,
`scheduler.pt` and `state.json` (epoch); `Splits.save_extras(directory)` adds what
inference needs besides the weights (a tokenizer), written by rank 0 only.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlsuite.errors import UsageError
from rlsuite.supervised.config import SupervisedConfig


@dataclass(frozen=True)
class Splits:
    """What a data set's `load` returns."""

    train: Any
    """`torch.utils.data.Dataset` (ray_data=False) or `ray.data.Dataset` (ray_data=True)."""
    validation: Any
    collate_fn: Callable[[Any], tuple[Any, Any]] | None = None
    """Items (torch) or a dict of arrays (Ray Data) -> (inputs, labels); None: default."""
    train_transform: Callable[[Any], Any] | None = None
    """Batch-level augmentation applied in the worker to training inputs on the device
    (random crop and flip of image Tensors); None: none."""
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments the model builder needs from the data (e.g. `vocab_size`)."""
    save_extras: Callable[[str], None] | None = None
    """Writes files inference needs besides the weights into a checkpoint directory."""
    train_size: int | None = None
    """Rows of the training split when it is a Ray Dataset (known without reading it, e.g.
    from a file listing); the loop's learning-rate schedule needs steps per epoch."""


@dataclass(frozen=True)
class DatasetEntry:
    module: str
    """Module holding the functions, imported only when the data set is used."""
    load: str
    """Function name: `(config) -> Splits`."""
    check: str
    """Function name: `(config) -> None`, raising UsageError before Ray starts."""
    synthetic: str
    """The synthetic data set `--smoke` uses instead (itself for synthetic ones)."""
    ray_data: bool = False
    """`load` returns Ray Datasets, loaded in the driver and sharded over Train workers."""
    task: str = "image"
    """image or text: which models fit it."""
    reuses_checkpoint: bool = False
    """`load(config, checkpoint)`: the start checkpoint's extras (a tokenizer) are reused."""


VISION = "rlsuite.supervised.vision"
IMAGEFOLDER = "rlsuite.supervised.imagefolder"
TEXT = "rlsuite.supervised.text"

DATASETS: dict[str, DatasetEntry] = {
    "cifar10": DatasetEntry(VISION, "load_cifar10", "check_cifar10", "synthetic_images"),
    "imagefolder": DatasetEntry(
        IMAGEFOLDER, "load_imagefolder", "check_imagefolder", "synthetic_images", ray_data=True
    ),
    "synthetic_images": DatasetEntry(
        VISION, "load_synthetic", "check_synthetic", "synthetic_images"
    ),
    "sst2": DatasetEntry(
        TEXT, "load_sst2", "check_sst2", "synthetic_text", task="text", reuses_checkpoint=True
    ),
    "mnli": DatasetEntry(
        TEXT, "load_mnli", "check_mnli", "synthetic_text", task="text", reuses_checkpoint=True
    ),
    "synthetic_text": DatasetEntry(
        TEXT,
        "load_synthetic",
        "check_synthetic",
        "synthetic_text",
        task="text",
        reuses_checkpoint=True,
    ),
}

MODELS: dict[str, str] = {
    "resnet18": f"{VISION}:build_resnet18",
    "resnet50": f"{VISION}:build_resnet50",
    "bert": f"{TEXT}:build_bert",
}

MODEL_TASKS: dict[str, str] = {"resnet18": "image", "resnet50": "image", "bert": "text"}


def dataset_entry(name: str) -> DatasetEntry:
    if name not in DATASETS:
        raise UsageError(f"unknown dataset '{name}'; {_suggest(name, DATASETS)}")
    return DATASETS[name]


def check_model(name: str) -> None:
    if name not in MODELS:
        raise UsageError(f"unknown model '{name}'; {_suggest(name, MODELS)}")


def load(config: SupervisedConfig, checkpoint: Any = None) -> Splits:
    """The data set's splits; `checkpoint` (a `ray.train.Checkpoint` or None) is the one
    the run starts from, handed to `reuses_checkpoint` entries."""
    entry = dataset_entry(config.dataset)
    function = getattr(importlib.import_module(entry.module), entry.load)
    splits: Splits = function(config, checkpoint) if entry.reuses_checkpoint else function(config)
    return splits


def check_data(config: SupervisedConfig) -> None:
    """Names, model/data fit and the data path, before Ray starts (UsageError if wrong)."""
    entry = dataset_entry(config.dataset)
    check_model(config.model)
    if MODEL_TASKS[config.model] != entry.task:
        raise UsageError(
            f"model '{config.model}' is for {MODEL_TASKS[config.model]} data but dataset "
            f"'{config.dataset}' is {entry.task}; --set model=... or dataset=... to match"
        )
    getattr(importlib.import_module(entry.module), entry.check)(config)


def build_model(config: SupervisedConfig, model_kwargs: Mapping[str, Any]) -> Any:
    check_model(config.model)
    module, _, function = MODELS[config.model].partition(":")
    return getattr(importlib.import_module(module), function)(config, **model_kwargs)


def data_dir(config: SupervisedConfig, what: str) -> Path:
    """`config.data_path` as a Path; UsageError if unset, missing, a file or empty. `what`
    says what the directory should be, for the message."""
    if not config.data_path:
        raise UsageError(
            f"{config.dataset}: no data_path; --set data_path=DIR ({what}), or --smoke for synthetic data"
        )
    directory = Path(config.data_path).expanduser()
    if not directory.exists():
        raise UsageError(
            f"{config.dataset}: data_path {directory} does not exist; --set data_path=DIR ({what})"
        )
    if not directory.is_dir():
        raise UsageError(f"{config.dataset}: data_path {directory} is a file; point it at {what}")
    if not any(directory.iterdir()):
        raise UsageError(f"{config.dataset}: data_path {directory} is empty; point it at {what}")
    return directory


def _suggest(name: str, choices: Mapping[str, Any]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=2, cutoff=0.5)
    if close:
        return f"did you mean {' or '.join(close)}?"
    return f"choose one of {', '.join(choices)}"
