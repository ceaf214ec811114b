"""Evaluate a supervised checkpoint: accuracy and loss of the trained model on a
validation split, by default the one it was validated on during training.

`--dataset` and `--data-path` point it at other data of the same task (a model trained
with `--smoke` on synthetic images, scored on a CIFAR-10 directory). The data is checked
by the data set's own `check` and loaded by its own `load`, with the checkpoint's
tokenizer for text, so scores here are the training loop's validation scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray.train
import torch
from torch.utils.data import DataLoader, Dataset

from rlsuite.errors import UsageError
from rlsuite.evaluation.damage import DamagedCheckpointError, restoring
from rlsuite.evaluation.locate import Target
from rlsuite.supervised import checkpoint as checkpoint_files
from rlsuite.supervised import registry
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.loop import validation_totals


@dataclass(frozen=True)
class Scores:
    accuracy: float
    loss: float
    examples: int


@dataclass
class SupervisedEvaluation:
    """Everything checked and loaded before any example is scored."""

    model: torch.nn.Module
    config: SupervisedConfig
    splits: registry.Splits


def evaluate(
    target: Target, dataset: str | None, data_path: str | None, batch_size: int | None
) -> None:
    """Print the checkpoint's accuracy and loss on the validation split chosen."""
    evaluation = prepare(target.checkpoint, dataset, data_path, batch_size)
    config = evaluation.config
    print(
        f"checkpoint {target.checkpoint} (trial {target.trial or 'unknown'}, model {config.model})"
    )
    scores = score(evaluation)
    print(
        f"{config.dataset} validation ({config.data_path or 'synthetic'}): accuracy {scores.accuracy:.4f}, loss {scores.loss:.4f} over {scores.examples} examples"
    )


def prepare(
    checkpoint: Path, dataset: str | None, data_path: str | None, batch_size: int | None
) -> SupervisedEvaluation:
    """The checkpoint's model and the validation split to score it on; UsageError (one
    line) for data the model cannot be scored on."""
    saved = ray.train.Checkpoint.from_directory(str(checkpoint))
    with restoring(checkpoint):
        state = checkpoint_files.read_state(checkpoint)
        if not isinstance(state, dict) or not isinstance(state.get("config"), dict):
            raise DamagedCheckpointError(
                f"{checkpoint / checkpoint_files.STATE_FILE} holds no trial config: not a checkpoint of rlsuite's supervised loop",
                checkpoint,
            )
        model, config = checkpoint_files.load_model(saved)
    trained_kwargs = state.get("model_kwargs") or {}
    changes: dict[str, Any] = {"num_workers": 1, "use_gpu": False, "loader_workers": 0}
    if dataset is not None:
        changes["dataset"] = dataset
    if data_path is not None:
        changes["data_path"] = data_path
    if batch_size is not None:
        changes["batch_size"] = batch_size
    config = config.replace(**changes)
    if data_path is not None and config.dataset.startswith("synthetic"):
        raise UsageError(
            f"--data-path: the checkpoint trained on {config.dataset}, which reads no files; add --dataset NAME (e.g. cifar10, sst2) for the data at {data_path}"
        )
    registry.check_data(config)
    splits = registry.load(config, saved)
    for key, value in splits.model_kwargs.items():
        if key in trained_kwargs and trained_kwargs[key] != value:
            raise UsageError(
                f"{config.dataset} at {config.data_path or '(synthetic)'} gives {key}={value} but the model was trained with {key}={trained_kwargs[key]}; evaluate on data of the task it learnt"
            )
    return SupervisedEvaluation(model, config, splits)


def score(evaluation: SupervisedEvaluation) -> Scores:
    config, splits = evaluation.config, evaluation.splits
    model_classes = _output_classes(evaluation.model, config)
    totals = validation_totals(
        evaluation.model,
        _checked(_batches(splits, config), model_classes),
        torch.device("cpu"),
        config,
    )
    loss, hits, examples = totals
    if not examples:
        raise UsageError(f"{config.dataset}: the validation split is empty; nothing to score")
    return Scores(accuracy=hits / examples, loss=loss / examples, examples=int(examples))


def _batches(splits: registry.Splits, config: SupervisedConfig) -> Any:
    """The whole validation split, in order: a DataLoader, or Ray Data's batches (the
    ImageFolder set; Ray Data starts a local Ray for it)."""
    if isinstance(splits.validation, Dataset):
        return DataLoader(
            splits.validation, batch_size=config.batch_size, collate_fn=splits.collate_fn
        )
    return splits.validation.iter_torch_batches(
        batch_size=config.batch_size, collate_fn=splits.collate_fn
    )


def _checked(batches: Any, classes: int) -> Any:
    for inputs, labels in batches:
        if labels.numel() and int(labels.max()) >= classes:
            raise UsageError(
                f"the data has class index {int(labels.max())} but the model has {classes} outputs; evaluate on data with the classes it was trained on"
            )
        yield inputs, labels


def _output_classes(model: torch.nn.Module, config: SupervisedConfig) -> int:
    labels = getattr(getattr(model, "config", None), "num_labels", None)  # transformers
    return int(labels) if labels is not None else config.num_classes
