"""Bad text data and model paths: one line, exit 2, nothing written, before Ray starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import BertConfig

from rlsuite.errors import UsageError
from rlsuite.launcher.loader import load_experiment
from rlsuite.launcher.prepare import prepare
from rlsuite.options import RunOptions
from rlsuite.run import build_parser
from rlsuite.supervised import text
from rlsuite.supervised.config import SupervisedConfig
from tests.helpers import ROOT, assert_rejected, run_main
from tests.supervised_data import write_mnli

SST2_FILE = ROOT / "experiments" / "bert_sst2.py"
MNLI_FILE = ROOT / "experiments" / "bert_mnli.py"


def _sst2_args(data: Path, *extra: str) -> list[str]:
    return [str(SST2_FILE), "--set", f"data_path={data}", "--set", "model_path=None", *extra]


def test_missing_data_directory(tmp_path, storage, capsys) -> None:
    code = run_main(*_sst2_args(tmp_path / "nowhere"), storage=storage)
    assert_rejected(capsys, code, storage, "does not exist", "data_path")


def test_empty_data_directory(tmp_path, storage, capsys) -> None:
    (tmp_path / "SST-2").mkdir()
    code = run_main(*_sst2_args(tmp_path / "SST-2"), storage=storage)
    assert_rejected(capsys, code, storage, "is empty")


def test_missing_dev_file(sst2_dir, storage, capsys) -> None:
    (sst2_dir / "dev.tsv").unlink()
    code = run_main(*_sst2_args(sst2_dir), storage=storage)
    assert_rejected(capsys, code, storage, "dev.tsv is missing")


def test_wrong_header(sst2_dir, storage, capsys) -> None:
    (sst2_dir / "train.tsv").write_text("index\tsentence\n0\tgood film\n")
    code = run_main(*_sst2_args(sst2_dir), storage=storage)
    assert_rejected(capsys, code, storage, "lacks column(s) label", "train.tsv")


def test_bad_label(sst2_dir, storage, capsys) -> None:
    (sst2_dir / "dev.tsv").write_text("sentence\tlabel\ngood film\t1\nbad film\t7\n")
    code = run_main(*_sst2_args(sst2_dir), storage=storage)
    assert_rejected(capsys, code, storage, "dev.tsv line 3", "label '7'")


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ("sentence\tlabel\ncaf\xe9 film\t1\n".encode("latin-1"), ("not UTF-8 text", "0xe9")),
        (b"sentence\tlabel\n" + b"a" * 200_000 + b"\t1\n", ("cannot be read as a TSV",)),
    ],
)
@pytest.mark.timeout(300)  # unrefused, the run would train
def test_a_file_that_is_not_utf8_tsv(sst2_dir, storage, capsys, content, needles) -> None:
    (sst2_dir / "train.tsv").write_bytes(content)
    code = run_main(*_sst2_args(sst2_dir), storage=storage)
    assert_rejected(capsys, code, storage, "train.tsv", *needles)


def test_num_classes_must_match_the_task(sst2_dir, storage, capsys) -> None:
    code = run_main(*_sst2_args(sst2_dir, "--set", "num_classes=3"), storage=storage)
    assert_rejected(capsys, code, storage, "num_classes=2")


def test_longer_inputs_than_the_pretrained_model_embeds(
    sst2_dir, tmp_path, storage, capsys
) -> None:
    bert = tmp_path / "bert"
    BertConfig(max_position_embeddings=512).save_pretrained(bert)
    (bert / "model.safetensors").write_bytes(b"")  # only the names are checked before Ray
    (bert / "vocab.txt").write_text("[PAD]\n")
    args = [str(SST2_FILE), "--set", f"data_path={sst2_dir}", "--set", f"model_path={bert}"]
    code = run_main(*args, "--set", "max_seq_length=1024", storage=storage)
    assert_rejected(capsys, code, storage, "more than the 512 positions", "max_seq_length=512")


def test_a_pretrained_model_that_is_not_bert(sst2_dir, tmp_path, storage, capsys) -> None:
    """transformers loads a DistilBERT folder into BERT with a warning, every weight new:
    the run trained from scratch, and its checkpoint failed to load for evaluate."""
    from transformers import DistilBertConfig

    distil = tmp_path / "distilbert"
    DistilBertConfig().save_pretrained(distil)
    (distil / "model.safetensors").write_bytes(b"")  # only the names are checked before Ray
    (distil / "vocab.txt").write_text("[PAD]\n")
    args = [str(SST2_FILE), "--set", f"data_path={sst2_dir}", "--set", f"model_path={distil}"]
    code = run_main(*args, storage=storage)
    assert_rejected(capsys, code, storage, "holds a distilbert model", "fine-tunes BERT")


def test_missing_pretrained_directory(sst2_dir, tmp_path, storage, capsys) -> None:
    args = [str(SST2_FILE), "--set", f"data_path={sst2_dir}"]
    code = run_main(*args, "--set", f"model_path={tmp_path / 'bert'}", storage=storage)
    assert_rejected(capsys, code, storage, "model_path", "does not exist")


def test_pretrained_directory_without_weights(sst2_dir, tmp_path, storage, capsys) -> None:
    (tmp_path / "bert").mkdir()
    BertConfig().save_pretrained(tmp_path / "bert")
    args = [str(SST2_FILE), "--set", f"data_path={sst2_dir}"]
    code = run_main(*args, "--set", f"model_path={tmp_path / 'bert'}", storage=storage)
    assert_rejected(capsys, code, storage, "holds no weights")


def test_mnli_bad_gold_label(tmp_path, storage, capsys) -> None:
    data = write_mnli(tmp_path / "MNLI", [("A premise.", "A hypothesis.", "maybe")])
    args = [str(MNLI_FILE), "--set", f"data_path={data}", "--set", "model_path=None"]
    code = run_main(*args, storage=storage)
    assert_rejected(capsys, code, storage, "label 'maybe'", "entailment, neutral, contradiction")


def test_relative_paths_are_made_absolute_before_ray_starts(
    sst2_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Train workers do not run in the command's directory: relative paths must not
    reach them as they are."""
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(
        [str(SST2_FILE), "--set", "data_path=SST-2", "--set", "model_path=None"]
    )
    experiment, _, _ = prepare(load_experiment(SST2_FILE), RunOptions.from_args(args), "x")
    assert isinstance(experiment.config, SupervisedConfig)
    assert experiment.config.data_path == str(sst2_dir)


def test_not_a_text_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a text checkpoint"):
        text.load_for_inference(tmp_path)
