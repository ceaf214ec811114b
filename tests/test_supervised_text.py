"""BERT text classification: GLUE TSV reading, WordPiece tokenizers, pretrained
directories, a CLI run on SST-2-style files restored for inference, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import ray.train
import torch
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BertConfig,
    BertForSequenceClassification,
)

from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.supervised import text
from rlsuite.supervised.checkpoint import MODEL_FILE, load_model
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.text_data import (
    MNLI,
    SST2,
    TextExamples,
    read_glue,
    read_glue_tsv,
    synthetic_text,
)
from rlsuite.supervised.text_model import EncodedText, classify, collate_text, train_wordpiece
from tests.helpers import SupervisedSweep, run_cli, write
from tests.supervised_data import write_mnli

# --- reading GLUE files


def test_sst2_reads_sentences_and_labels(sst2_dir: Path) -> None:
    data = read_glue(SST2, sst2_dir)
    expected = synthetic_text(num_train=64, num_validation=32, seed=1)
    assert data.num_labels == 2
    assert data.train.text_a == expected.train.text_a
    assert data.train.labels == expected.train.labels
    assert data.validation.labels == expected.validation.labels
    assert data.train.text_b is None


def test_a_byte_order_mark_is_not_part_of_the_header(tmp_path: Path) -> None:
    """An Excel export starts with U+FEFF, which was read into the first column's name:
    "lacks column(s) sentence", a column the line showed as there."""
    path = tmp_path / "train.tsv"
    path.write_text("sentence\tlabel\ngood film\t1\n", encoding="utf-8-sig")
    assert read_glue_tsv(SST2, path).text_a == ["good film"]


def test_mnli_reads_pairs_by_header_name(tmp_path: Path) -> None:
    rows = [
        ('"Quoted" premise one.', "A hypothesis.", "entailment"),
        ("Premise two.", "Another one.", "neutral"),
        ("Premise three.", "A third.", "contradiction"),
    ]
    data = read_glue(MNLI, write_mnli(tmp_path / "MNLI", rows))
    assert data.num_labels == 3
    # GLUE's TSVs are unquoted: a leading quote character is part of the sentence.
    assert data.train.text_a == [premise for premise, _, _ in rows]
    assert data.train.text_b == [hypothesis for _, hypothesis, _ in rows]
    assert data.validation.labels == [0, 1, 2]


def test_limit_reads_only_the_first_rows(sst2_dir: Path) -> None:
    assert len(read_glue_tsv(SST2, sst2_dir / "train.tsv", limit=5)) == 5


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("", "is empty"),
        ("sentence\tlabel\n", "no examples"),
        ("text\tlabel\ngood\t1\n", "lacks column(s) sentence"),
        ("sentence\tlabel\ngood film\tpositive\n", "label 'positive'"),
        ("sentence,label\ngood film,1\n", "lacks column(s) sentence, label"),
    ],
)
def test_bad_tsv_is_a_usage_error(tmp_path: Path, content: str, needle: str) -> None:
    path = write(tmp_path, "train.tsv", content)
    with pytest.raises(UsageError, match="sst2") as error:
        read_glue_tsv(SST2, path)
    assert needle in str(error.value)


# --- tokenizer and model


def test_wordpiece_encodes_pairs() -> None:
    data = synthetic_text(num_train=256, num_validation=8)
    first = train_wordpiece(data.train.texts(), 500)
    pair = TextExamples(["great film"], [1], ["awful plot"])
    batch = collate_text([EncodedText(pair, first, max_seq_length=16)[0]])
    inputs, labels = batch
    assert {name: tensor.shape for name, tensor in inputs.items()} == {
        "input_ids": (1, 16),
        "attention_mask": (1, 16),
        "token_type_ids": (1, 16),
    }
    assert all(tensor.dtype == torch.long for tensor in inputs.values())
    ids = inputs["input_ids"][0].tolist()
    types = inputs["token_type_ids"][0].tolist()
    assert ids[0] == first.cls_token_id and ids.count(first.sep_token_id) == 2
    end_a = ids.index(first.sep_token_id) + 1
    end_b = ids.index(first.sep_token_id, end_a) + 1
    assert set(types[:end_a]) == {0} and set(types[end_a:end_b]) == {1}
    assert inputs["attention_mask"][0].tolist() == [1] * end_b + [0] * (16 - end_b)
    assert labels.tolist() == [1]


def test_a_restored_run_reuses_the_checkpoints_tokenizer(tmp_path: Path) -> None:
    """`tokenizers` learns WordPiece vocabularies with ties broken differently in each
    process: weights restored from a checkpoint need the vocabulary saved with them."""
    config = SupervisedConfig(
        model="bert", dataset="synthetic_text", num_classes=2, model_size="tiny",
        max_seq_length=16, synthetic_train_size=256, synthetic_val_size=16,
    )  # fmt: skip
    first = text.load_synthetic(config, None)
    assert first.save_extras is not None
    first.save_extras(str(tmp_path))
    assert {"tokenizer.json", "config.json"} <= {path.name for path in tmp_path.iterdir()}
    restored = text.load_synthetic(config, ray.train.Checkpoint.from_directory(tmp_path))
    assert restored.model_kwargs == first.model_kwargs
    for index in range(len(first.train)):
        assert torch.equal(
            restored.train[index][0]["input_ids"], first.train[index][0]["input_ids"]
        )


def test_pretrained_directory_gives_tokenizer_and_weights(sst2_dir: Path, tmp_path: Path) -> None:
    """The `from_pretrained` path, with a tiny model and tokenizer the test saves itself."""
    data = read_glue(SST2, sst2_dir)
    tokenizer = train_wordpiece(data.train.texts(), 300)
    torch.manual_seed(3)
    saved = BertForSequenceClassification(
        BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            num_labels=3,  # the head is replaced: SST-2 has 2 labels
        )
    )
    pretrained = tmp_path / "pretrained"
    saved.save_pretrained(pretrained)
    tokenizer.save_pretrained(pretrained)

    config = SupervisedConfig(
        model="bert", dataset="sst2", data_path=str(sst2_dir), num_classes=2,
        model_path=str(pretrained), max_seq_length=24,
    )  # fmt: skip
    text.check_sst2(config)
    splits = text.load_sst2(config, None)
    model = text.build_bert(config, **splits.model_kwargs)
    assert isinstance(model, BertForSequenceClassification)
    assert model.config.num_labels == 2
    assert torch.equal(
        model.bert.embeddings.word_embeddings.weight, saved.bert.embeddings.word_embeddings.weight
    )
    encoded = tokenizer(data.train.text_a[0], max_length=24, padding="max_length")
    assert splits.train[0][0]["input_ids"].tolist() == encoded["input_ids"]
    inputs, _ = splits.collate_fn([splits.train[i] for i in range(4)])
    assert model(**inputs).logits.shape == (4, 2)


# --- through the CLI


def test_sst2_files_train_checkpoint_and_restore_for_inference(
    sst2_sweep: SupervisedSweep,
) -> None:
    """bert_sst2.py's smoke (a tiny BERT, a WordPiece vocabulary) trained by the CLI on
    SST-2-style TSVs: each checkpoint restores with transformers' own classes and
    classifies sentences with the accuracy its trial reported."""
    dev = read_glue(SST2, sst2_sweep.data).validation
    for trial in sst2_sweep.trials():
        assert trial["status"] == "OK"
        progress = pd.read_csv(sst2_sweep.experiment_dir / trial["trial"] / "progress.csv")
        assert list(progress[metrics.EPOCH]) == [1, 2]
        assert (progress[metrics.SAMPLES_PER_SECOND] > 0).all()

        checkpoint = Path(trial["checkpoint"])
        assert json.loads((checkpoint / "state.json").read_text())["epoch"] == 2
        model = AutoModelForSequenceClassification.from_config(
            AutoConfig.from_pretrained(checkpoint)
        )
        model.load_state_dict(torch.load(checkpoint / MODEL_FILE))
        tokenizer = AutoTokenizer.from_pretrained(checkpoint)
        restored, _ = text.load_for_inference(checkpoint)
        length = load_model(ray.train.Checkpoint.from_directory(checkpoint))[1].max_seq_length
        predicted = classify(model, tokenizer, dev.text_a, max_seq_length=length)
        accuracy = sum(p == y for p, y in zip(predicted, dev.labels, strict=True)) / len(dev)
        assert accuracy == pytest.approx(progress[metrics.VALIDATION_ACCURACY].iloc[-1])
        assert classify(restored, tokenizer, dev.text_a[:4], max_seq_length=length) == predicted[:4]


@pytest.mark.slow
def test_synthetic_text_is_learnt_above_chance(tmp_path: Path, storage: Path) -> None:
    experiment = write(
        tmp_path,
        "bert_tiny_synthetic.py",
        '''"""Tiny BERT on the synthetic text task."""
from rlsuite import Experiment, metrics
from rlsuite.supervised import SupervisedConfig

experiment = Experiment(
    config=SupervisedConfig(
        model="bert", model_size="tiny", dataset="synthetic_text", num_classes=2,
        max_seq_length=32, epochs=3, batch_size=32, optimizer="adamw", lr=1e-3,
        weight_decay=0.01, lr_schedule="linear", loader_workers=0,
        synthetic_train_size=2048, synthetic_val_size=512,
    ),
    stop={metrics.EPOCH: 3},
    metric=metrics.VALIDATION_ACCURACY,
)
''',
    )
    run = run_cli(experiment, storage=storage)
    assert run.returncode == 0, run.stderr[-3000:]
    (trial,) = run.summary(experiment.stem)["trials"]
    progress = pd.read_csv(storage / experiment.stem / trial["trial"] / "progress.csv")
    assert progress[metrics.VALIDATION_ACCURACY].iloc[-1] >= 0.8  # chance: 0.5
