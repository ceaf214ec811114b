"""Text classification data from local disk: GLUE SST-2 and MNLI TSV files, and a synthetic
task for smoke runs and tests. Nothing is downloaded.

Readers check what they read and raise `UsageError` naming the file, the line and the fix,
so a bad path or format is one line before Ray starts.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlsuite.errors import UsageError

SST2_LABELS = ("0", "1")  # negative, positive
MNLI_LABELS = ("entailment", "neutral", "contradiction")  # GLUE's order: 0, 1, 2


@dataclass(frozen=True)
class TextExamples:
    """Sentences (or sentence pairs) and their integer labels."""

    text_a: list[str]
    labels: list[int]
    text_b: list[str] | None = None
    """Second sentence of each pair (MNLI's hypothesis); None for single sentences."""

    def __len__(self) -> int:
        return len(self.labels)

    def texts(self) -> Iterator[str]:
        """Every sentence, for training a vocabulary."""
        yield from self.text_a
        if self.text_b is not None:
            yield from self.text_b


@dataclass(frozen=True)
class TextDataset:
    """A training and a validation split of one task."""

    train: TextExamples
    validation: TextExamples
    num_labels: int


@dataclass(frozen=True)
class GlueTask:
    """Where a GLUE task's files are and which columns hold what."""

    name: str
    train_file: str
    validation_file: str
    text_columns: tuple[str, ...]
    label_column: str
    labels: tuple[str, ...]


SST2 = GlueTask("sst2", "train.tsv", "dev.tsv", ("sentence",), "label", SST2_LABELS)
MNLI = GlueTask(
    "mnli", "train.tsv", "dev_matched.tsv", ("sentence1", "sentence2"), "gold_label", MNLI_LABELS
)
GLUE_TASKS = {task.name: task for task in (SST2, MNLI)}


def read_glue(task: GlueTask, data_dir: str | Path) -> TextDataset:
    """Both splits of a GLUE task from its directory as GLUE distributes it."""
    directory = Path(data_dir).expanduser()
    if not directory.is_dir():
        raise UsageError(
            f"{task.name} data directory {directory} does not exist; point data_path at the "
            f"folder holding {task.train_file} and {task.validation_file}"
        )
    return TextDataset(
        train=read_glue_tsv(task, directory / task.train_file),
        validation=read_glue_tsv(task, directory / task.validation_file),
        num_labels=len(task.labels),
    )


def read_glue_tsv(task: GlueTask, path: Path, limit: int | None = None) -> TextExamples:
    """One GLUE TSV file (its first `limit` examples if given); columns are found by their
    header names, so any column order and MNLI's extra columns (parses, genre, annotator
    labels) are fine."""
    if not path.is_file():
        raise UsageError(f"{task.name}: {path} is missing; GLUE's {task.name} folder holds it")
    try:
        return _read_glue_tsv(task, path, limit)
    except UnicodeDecodeError as error:
        raise UsageError(
            f"{task.name}: {path} is not UTF-8 text (byte 0x{error.object[error.start]:02x}: "
            f"{error.reason}); GLUE's files are UTF-8: convert it, e.g. iconv -f latin1 -t utf-8"
        ) from None
    except csv.Error as error:  # a field over csv's size limit, a NUL byte
        raise UsageError(f"{task.name}: {path} cannot be read as a TSV: {error}") from None


def _read_glue_tsv(task: GlueTask, path: Path, limit: int | None) -> TextExamples:
    # GLUE's TSVs are not CSV-quoted: a sentence may start with a quote character.
    # utf-8-sig: a byte-order mark (an Excel export) would be part of the first column's
    # name, refused as a missing column that the line shows as present.
    with path.open(encoding="utf-8-sig", newline="") as file:
        rows = csv.reader(file, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(rows, None)
        if header is None:
            raise UsageError(f"{task.name}: {path} is empty; expected a header and examples")
        columns = _column_indices(task, path, header)
        texts: list[list[str]] = [[] for _ in task.text_columns]
        labels: list[int] = []
        for line, row in enumerate(rows, start=2):
            if limit is not None and len(labels) >= limit:
                break
            if not row:
                continue
            row_texts, label = _parse_row(task, path, line, row, columns)
            for column, text in zip(texts, row_texts, strict=True):
                column.append(text)
            labels.append(label)
    if not labels:
        raise UsageError(f"{task.name}: {path} has a header but no examples")
    return TextExamples(texts[0], labels, texts[1] if len(texts) > 1 else None)


def _column_indices(task: GlueTask, path: Path, header: Sequence[str]) -> list[int]:
    wanted = [*task.text_columns, task.label_column]
    names = [name.strip() for name in header]
    missing = [name for name in wanted if name not in names]
    if missing:
        raise UsageError(
            f"{task.name}: {path} lacks column(s) {', '.join(missing)} in its header "
            f"({', '.join(names)}); expected GLUE's tab-separated {task.name} format with "
            f"columns {', '.join(wanted)}"
        )
    return [names.index(name) for name in wanted]


def _parse_row(
    task: GlueTask, path: Path, line: int, row: Sequence[str], columns: Sequence[int]
) -> tuple[list[str], int]:
    if len(row) <= max(columns):
        raise UsageError(
            f"{task.name}: {path} line {line} has {len(row)} fields, fewer than the header; "
            "is the file tab-separated?"
        )
    *texts, raw_label = (row[index] for index in columns)
    label = raw_label.strip()
    if label not in task.labels:
        raise UsageError(
            f"{task.name}: {path} line {line} has label {label!r}; expected one of "
            f"{', '.join(task.labels)}"
        )
    return texts, task.labels.index(label)


# The synthetic task: each sentence mixes filler words with three cue words, two of its
# label's class and one of another, so a model must find and weigh a few words anywhere
# in the sentence (what SST-2 asks, without the subtlety). Chance is 1/num_labels.
_FILLER_WORDS = (
    "the a movie film story it was is and of to with this that plot actors scene "
    "some very quite rather just one time ending music"
)
_CUE_WORDS = (
    "great wonderful brilliant moving superb delightful",
    "awful boring dull tedious terrible clumsy",
    "strange quiet long loud slow modern",
)
FILLER = _FILLER_WORDS.split()
CUES = [words.split() for words in _CUE_WORDS]
"""Cue words of each class; the synthetic task has up to len(CUES) classes."""


def synthetic_text(
    num_train: int = 2048,
    num_validation: int = 512,
    num_labels: int = 2,
    seed: int = 0,
    words: int = 12,
) -> TextDataset:
    """A learnable sentence-classification task, generated in memory."""
    if not 2 <= num_labels <= len(CUES):
        raise UsageError(f"synthetic text has 2 to {len(CUES)} labels, not {num_labels}")
    rng = random.Random(seed)
    return TextDataset(
        train=_synthetic_split(rng, num_train, num_labels, words),
        validation=_synthetic_split(rng, num_validation, num_labels, words),
        num_labels=num_labels,
    )


def _synthetic_split(rng: random.Random, size: int, num_labels: int, words: int) -> TextExamples:
    sentences, labels = [], []
    for _ in range(size):
        label = rng.randrange(num_labels)
        other = rng.choice([c for c in range(num_labels) if c != label])
        cues = [*rng.sample(CUES[label], 2), rng.choice(CUES[other])]
        sentence = rng.choices(FILLER, k=words - len(cues)) + cues
        rng.shuffle(sentence)
        sentences.append(" ".join(sentence))
        labels.append(label)
    return TextExamples(sentences, labels)
