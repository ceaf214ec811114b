"""Text classification: BERT (`BertForSequenceClassification`) on GLUE SST-2 and MNLI read
from local TSV files, or on synthetic sentences. Nothing is downloaded.

Data set and model functions follow the contract in `rlsuite.supervised.registry`. With
`model_path` the tokenizer and weights come from that pretrained directory; without it
the model is a `BertConfig` of `model_size` with a WordPiece vocabulary trained on the
training text. Checkpoints then hold, besides the loop's `model.pt`, the tokenizer files
and the model's `config.json`, so `load_for_inference` (or the same three library calls)
rebuilds the classifier without the experiment.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import ray.train
import torch
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    PretrainedConfig,
    PreTrainedTokenizerBase,
)

from rlsuite.errors import UsageError
from rlsuite.supervised.batches import check_steps
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.registry import Splits, data_dir
from rlsuite.supervised.text_data import (
    CUES,
    MNLI,
    SST2,
    GlueTask,
    TextDataset,
    TextExamples,
    read_glue,
    read_glue_tsv,
    synthetic_text,
)
from rlsuite.supervised.text_model import (
    EncodedText,
    bert_config,
    bert_from_config,
    bert_tokenizer,
    check_positions,
    check_pretrained,
    collate_text,
    load_pretrained,
    wordpiece_vocabulary,
)

__all__ = [
    "build_bert",
    "check_mnli",
    "check_sst2",
    "check_synthetic",
    "load_for_inference",
    "load_mnli",
    "load_sst2",
    "load_synthetic",
]

WORDPIECE_VOCAB_SIZE = 30_522  # BERT's uncased vocabulary; small corpora yield fewer tokens
TOKENIZER_FILE = "tokenizer.json"  # what `save_pretrained` writes for a fast tokenizer
CHECK_ROWS = 1_000  # rows per file the pre-Ray check parses; `load` parses them all


# --- data sets


def check_sst2(config: SupervisedConfig) -> None:
    _check_glue(SST2, config)


def check_mnli(config: SupervisedConfig) -> None:
    _check_glue(MNLI, config)


def load_sst2(config: SupervisedConfig, checkpoint: ray.train.Checkpoint | None) -> Splits:
    return _splits(config, read_glue(SST2, str(config.data_path)), checkpoint)


def load_mnli(config: SupervisedConfig, checkpoint: ray.train.Checkpoint | None) -> Splits:
    return _splits(config, read_glue(MNLI, str(config.data_path)), checkpoint)


def check_synthetic(config: SupervisedConfig) -> None:
    if not 2 <= config.num_classes <= len(CUES):
        raise UsageError(
            f"synthetic_text has 2 to {len(CUES)} classes, not num_classes={config.num_classes}; "
            f"--set num_classes=2"
        )
    check_steps(config.synthetic_train_size, config, config.max_workers or config.num_workers)
    _check_model_path(config)


def load_synthetic(config: SupervisedConfig, checkpoint: ray.train.Checkpoint | None) -> Splits:
    dataset = synthetic_text(
        num_train=config.synthetic_train_size,
        num_validation=config.synthetic_val_size,
        num_labels=config.num_classes,
        seed=config.seed,
    )
    return _splits(config, dataset, checkpoint)


def _check_glue(task: GlueTask, config: SupervisedConfig) -> None:
    what = f"GLUE's {task.name} folder with {task.train_file} and {task.validation_file}"
    directory = data_dir(config, what)
    if config.num_classes != len(task.labels):
        raise UsageError(
            f"{task.name} has {len(task.labels)} classes but num_classes is "
            f"{config.num_classes}; --set num_classes={len(task.labels)}"
        )
    for name in (task.train_file, task.validation_file):
        read_glue_tsv(task, directory / name, limit=CHECK_ROWS)  # header, columns, labels
    _check_model_path(config)


def _check_model_path(config: SupervisedConfig) -> None:
    if config.model_path is not None:
        check_positions(check_pretrained(config.model_path), config.max_seq_length)


def _splits(
    config: SupervisedConfig, dataset: TextDataset, checkpoint: ray.train.Checkpoint | None
) -> Splits:
    """Tokenized splits; the model's size and labels follow from the data and tokenizer."""
    tokenizer = _tokenizer(config, dataset.train, checkpoint)
    model_config = _model_config(config, dataset.num_labels, len(tokenizer))
    return Splits(
        train=EncodedText(dataset.train, tokenizer, config.max_seq_length),
        validation=EncodedText(dataset.validation, tokenizer, config.max_seq_length),
        collate_fn=collate_text,
        model_kwargs={"num_labels": dataset.num_labels, "vocab_size": len(tokenizer)},
        save_extras=functools.partial(_save_for_inference, tokenizer, model_config),
    )


def _tokenizer(
    config: SupervisedConfig, train: TextExamples, checkpoint: ray.train.Checkpoint | None
) -> PreTrainedTokenizerBase:
    """The start checkpoint's tokenizer, else the pretrained one, else a new vocabulary.
    `tokenizers` breaks ties between equally frequent merges differently in each process,
    so a vocabulary learnt again would give restored weights other token ids."""
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            if (Path(directory) / TOKENIZER_FILE).is_file():
                return AutoTokenizer.from_pretrained(directory)
    if config.model_path is not None:
        return AutoTokenizer.from_pretrained(check_pretrained(config.model_path))
    return bert_tokenizer(_shared_vocabulary(train))


def _shared_vocabulary(train: TextExamples) -> dict[str, int]:
    """Rank 0 trains the vocabulary and sends it to the other Train workers: every DDP
    replica must map tokens to the same embedding rows (see `_tokenizer`)."""
    import torch.distributed as dist

    distributed = dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1
    vocabulary: list[Any] = [None]
    if not distributed or dist.get_rank() == 0:
        vocabulary[0] = wordpiece_vocabulary(train.texts(), WORDPIECE_VOCAB_SIZE)
    if distributed:
        dist.broadcast_object_list(vocabulary, src=0)
    return dict(vocabulary[0])


def _model_config(config: SupervisedConfig, num_labels: int, vocab_size: int) -> PretrainedConfig:
    if config.model_path is not None:
        return AutoConfig.from_pretrained(config.model_path, num_labels=num_labels)
    return bert_config(config.model_size, vocab_size, num_labels, config.max_seq_length)


def _save_for_inference(
    tokenizer: PreTrainedTokenizerBase, model_config: PretrainedConfig, directory: str
) -> None:
    tokenizer.save_pretrained(directory)
    model_config.save_pretrained(directory)


# --- model


def build_bert(
    config: SupervisedConfig, *, num_labels: int, vocab_size: int, **_: Any
) -> torch.nn.Module:
    """The pretrained BERT at `model_path` with a new `num_labels` head, or a fresh one of
    `model_size` over the trained vocabulary."""
    if config.model_path is not None:
        return load_pretrained(config.model_path, num_labels)
    return bert_from_config(config.model_size, vocab_size, num_labels, config.max_seq_length)


def load_for_inference(checkpoint: str | Path) -> tuple[torch.nn.Module, PreTrainedTokenizerBase]:
    """The classifier and tokenizer of a text checkpoint directory, in eval mode: the model
    from its `config.json` with the loop's weights (`model.pt`), the tokenizer from its
    files, each through transformers' Auto classes."""
    from rlsuite.supervised.checkpoint import MODEL_FILE

    directory = Path(checkpoint)
    if not (directory / "config.json").is_file() or not (directory / MODEL_FILE).is_file():
        raise UsageError(
            f"{directory} is not a text checkpoint (config.json and {MODEL_FILE}); give a "
            "checkpoint directory of a bert trial"
        )
    model = AutoModelForSequenceClassification.from_config(AutoConfig.from_pretrained(directory))
    model.load_state_dict(torch.load(directory / MODEL_FILE, map_location="cpu"))
    return model.eval(), AutoTokenizer.from_pretrained(directory)
