"""BERT sequence classifiers and their tokenizers, from a local pretrained directory or built
from scratch: a `BertConfig` of a named size and a WordPiece vocabulary trained with the
`tokenizers` library on the training text. Nothing is downloaded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch.utils.data import Dataset
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    BertTokenizer,
    PreTrainedTokenizerBase,
)

from rlsuite.errors import UsageError
from rlsuite.supervised.text_data import TextExamples


# Sizes of BERT built from scratch (`SupervisedConfig.model_size`): `tiny` is Turc et
# al.'s BERT-Tiny shape (2 layers, 128 hidden, 2 heads), for smoke runs and CPUs; `base`
# is BERT-base (Devlin et al. 2019).
class BertShape(NamedTuple):
    layers: int
    hidden: int
    heads: int


BERT_SIZES: dict[str, BertShape] = {
    "tiny": BertShape(layers=2, hidden=128, heads=2),
    "base": BertShape(layers=12, hidden=768, heads=12),
}

# Files that make a directory loadable by `from_pretrained` (weights in either format).
_CONFIG_FILE = "config.json"
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")
_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt")


def bert_config(size: str, vocab_size: int, num_labels: int, max_seq_length: int) -> BertConfig:
    """A `BertConfig` of a named size; the feed-forward width is 4x hidden as in BERT."""
    if size not in BERT_SIZES:
        raise UsageError(f"unknown BERT size {size!r}; use one of {', '.join(BERT_SIZES)}")
    shape = BERT_SIZES[size]
    config = BertConfig(
        vocab_size=vocab_size,
        num_hidden_layers=shape.layers,
        hidden_size=shape.hidden,
        num_attention_heads=shape.heads,
        intermediate_size=4 * shape.hidden,
        max_position_embeddings=max(512, max_seq_length),
    )
    config.num_labels = num_labels  # PretrainedConfig's setter also names the labels
    return config


def bert_from_config(
    size: str, vocab_size: int, num_labels: int, max_seq_length: int
) -> BertForSequenceClassification:
    """A randomly initialised BERT classifier (BERT's own initialisation)."""
    return BertForSequenceClassification(bert_config(size, vocab_size, num_labels, max_seq_length))


def wordpiece_vocabulary(texts: Iterable[str], vocab_size: int) -> dict[str, int]:
    """A WordPiece vocabulary (token -> id, BERT's special tokens first) trained on `texts`."""
    from tokenizers import BertWordPieceTokenizer

    # BertWordPieceTokenizer is BERT's normaliser (lower case), pre-tokenizer and special
    # tokens around tokenizers' WordPiece trainer; `bert_tokenizer` wraps the vocabulary in
    # the same pipeline, so encoding matches what was trained.
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(
        texts, vocab_size=vocab_size, min_frequency=1, show_progress=False
    )
    return dict(wordpiece.get_vocab())


def bert_tokenizer(vocabulary: dict[str, int]) -> PreTrainedTokenizerBase:
    """BERT's (uncased) tokenizer over a vocabulary: it saves with the checkpoint
    (`save_pretrained`) and reloads with `AutoTokenizer.from_pretrained`. In transformers 5
    `BertTokenizer` is the `tokenizers`-backed fast one (`BertTokenizerFast` its alias)."""
    return BertTokenizer(vocab=vocabulary, do_lower_case=True)


def train_wordpiece(texts: Iterable[str], vocab_size: int) -> PreTrainedTokenizerBase:
    return bert_tokenizer(wordpiece_vocabulary(texts, vocab_size))


def check_pretrained(model_path: str | Path) -> Path:
    """The directory of a pretrained model, checked before Ray starts."""
    path = Path(model_path).expanduser()
    if not path.is_dir():
        raise UsageError(
            f"model_path {path} does not exist; give a directory written by save_pretrained "
            "(config.json, weights, tokenizer files), or --set model_path=None to train from scratch"
        )
    names = {child.name for child in path.iterdir()}
    for wanted, what in (
        ((_CONFIG_FILE,), "config.json"),
        (_WEIGHT_FILES, "weights (model.safetensors or pytorch_model.bin)"),
        (_TOKENIZER_FILES, "a tokenizer (tokenizer.json or vocab.txt)"),
    ):
        if not names.intersection(wanted):
            raise UsageError(
                f"model_path {path} holds no {what}; save the model and its tokenizer there "
                "with save_pretrained"
            )
    return path


def check_positions(path: Path, max_seq_length: int) -> None:
    """A pretrained BERT embeds at most `max_position_embeddings` positions (512 for
    bert-base): longer inputs would fail with an index error inside the trial."""
    try:
        saved = json.loads((path / _CONFIG_FILE).read_text())
        positions, model_type = saved.get("max_position_embeddings"), saved.get("model_type")
    except (OSError, ValueError, AttributeError):
        raise UsageError(
            f"model_path {path}: {_CONFIG_FILE} is not a model config (JSON written by "
            "save_pretrained)"
        ) from None
    if model_type is not None and model_type != "bert":
        # transformers loads other weights into BERT with a warning, every weight then new.
        raise UsageError(
            f"model_path {path} holds a {model_type} model; the suite fine-tunes BERT: give "
            "a BERT checkpoint (bert-base-uncased's folder) or model_path=None"
        )
    if isinstance(positions, int) and max_seq_length > positions:
        raise UsageError(
            f"max_seq_length {max_seq_length} is more than the {positions} positions the "
            f"pretrained model at {path} embeds; --set max_seq_length={positions} or less"
        )


def load_pretrained(model_path: str | Path, num_labels: int) -> BertForSequenceClassification:
    """A pretrained BERT with a classification head of `num_labels` outputs."""
    # The head's size may differ from the checkpoint's (a model saved with 3 labels,
    # fine-tuned for 2): the saved head is then dropped and a new one initialised.
    model: BertForSequenceClassification = BertForSequenceClassification.from_pretrained(
        check_pretrained(model_path), num_labels=num_labels, ignore_mismatched_sizes=True
    )
    return model


TextInputs = dict[str, torch.Tensor]
"""What `BertForSequenceClassification` takes: input_ids, attention_mask, token_type_ids."""

# Stored compactly (MNLI's 393k pairs at 128 tokens are 1.2 GB as int64 per tensor set);
# `collate_text` widens each batch to the int64 the embeddings index with.
_STORED_DTYPES = {
    "input_ids": torch.int32,
    "attention_mask": torch.int8,
    "token_type_ids": torch.int8,
}


class EncodedText(Dataset[tuple[TextInputs, torch.Tensor]]):
    """Examples tokenized once, with padding and truncation to `max_seq_length`, held as
    tensors; item i is (inputs, label)."""

    def __init__(
        self, examples: TextExamples, tokenizer: PreTrainedTokenizerBase, max_seq_length: int
    ) -> None:
        # One call for the whole split: the Rust tokenizer encodes the batch in parallel.
        encoded: Any = tokenizer(
            examples.text_a,
            examples.text_b,
            padding="max_length",
            truncation=True,
            max_length=max_seq_length,
            return_token_type_ids=True,
            return_attention_mask=True,
            return_tensors="pt",
        )
        self.inputs = {name: encoded[name].to(dtype) for name, dtype in _STORED_DTYPES.items()}
        self.labels = torch.tensor(examples.labels, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[TextInputs, torch.Tensor]:
        return {name: tensor[index] for name, tensor in self.inputs.items()}, self.labels[index]


def collate_text(items: list[tuple[TextInputs, torch.Tensor]]) -> tuple[TextInputs, torch.Tensor]:
    """A batch as the loop takes it: (dict of int64 [batch, seq] tensors, labels)."""
    inputs = {
        name: torch.stack([item[0][name] for item in items]).long() for name in _STORED_DTYPES
    }
    return inputs, torch.stack([item[1] for item in items])


def classify(
    model: BertForSequenceClassification,
    tokenizer: PreTrainedTokenizerBase,
    text_a: list[str],
    text_b: list[str] | None = None,
    max_seq_length: int = 128,
) -> list[int]:
    """Predicted labels of sentences (or pairs): inference with a restored checkpoint."""
    model.eval()
    batch = tokenizer(
        text_a,
        text_b,
        padding=True,
        truncation=True,
        max_length=max_seq_length,
        return_token_type_ids=True,
        return_tensors="pt",
    )
    with torch.no_grad():
        logits = model(**batch).logits
    return logits.argmax(dim=-1).tolist()
