"""Rows that run an experiment file under a name of their own (the resnet18_* rows at a
stated 2-CPU budget), their commands, and the CIFAR-10-format data one of them writes
first. No test here starts Ray or trains."""

from __future__ import annotations

import dataclasses
import pickle
import shlex
from pathlib import Path

import numpy as np
import pytest

from benchmarks import experiment_file, table_run
from benchmarks.cifar_format import GREY_LEVELS_PER_UNIT, main, write_cifar_format
from benchmarks.common import Child
from benchmarks.table import BY_NAME, CIFAR_FORMAT_DATA, commands
from benchmarks.table_records import Records
from benchmarks.table_render import render
from benchmarks.tests.table_helpers import measurement, table_line

TAIL = "--storage-path results/benchmarks --overwrite"
SYNTHETIC = (
    "python -m rlsuite.run experiments/resnet_cifar10.py --seeds 3 --stop epoch=3 "
    "--set dataset=synthetic_images --set synthetic_train_size=1024 "
    "--set synthetic_val_size=512 --set epochs=3 --num-samples 1 --no-search "
    f"--name resnet18_synthetic {TAIL}"
)
WRITE_DATA = (
    "python scripts/write_cifar_format.py results/benchmarks/data/cifar_format "
    "--train-images 1024 --test-images 512"
)
CIFAR_FORMAT = (
    f"{WRITE_DATA} && python -m rlsuite.run experiments/resnet_cifar10.py --seeds 3 "
    "--stop epoch=3 --set dataset=cifar10 --set data_path=results/benchmarks/data/cifar_format "
    f"--set epochs=3 --num-samples 1 --no-search --name resnet18_cifar_format {TAIL}"
)


def test_the_resnet18_rows_run_one_trial_a_seed_of_the_cifar_file() -> None:
    """The file sweeps 8 trials; these rows run its own values once a seed, in one run."""
    assert experiment_file.num_samples("resnet_cifar10") == 8
    for name, line in [("resnet18_synthetic", SYNTHETIC), ("resnet18_cifar_format", CIFAR_FORMAT)]:
        row = BY_NAME[name]
        assert row.stem == "resnet_cifar10" and row.cpu_ok and not row.population
        shown = commands(row, 3)
        assert shown.line == line and shown.names == [name]
        [argv] = shown.argvs
        assert shlex.split(line.split(" && ")[-1]) == ["python", *argv]
    assert BY_NAME["resnet18_synthetic"].prepare == ()
    assert commands(BY_NAME["resnet_cifar10"], 1).prepare is None  # the GPU row as it was
    prepare = commands(BY_NAME["resnet18_cifar_format"], 3).prepare
    assert prepare is not None and ["python", *prepare] == shlex.split(WRITE_DATA)
    assert CIFAR_FORMAT_DATA in prepare


def test_lookups_read_the_experiment_file_not_the_rows_name() -> None:
    """No experiments/resnet18_synthetic.py exists: the stop and the trial count come from
    resnet_cifar10.py wherever the row does not set its own."""
    row = BY_NAME["resnet18_synthetic"]
    assert row.measured_stop() == ("epoch=3",)
    assert dataclasses.replace(row, stop=()).measured_stop() == ("epoch=200",)
    sweep = dataclasses.replace(row, num_samples=None)  # the file's 8 trials: one run a seed
    assert sweep.population
    shown = commands(sweep, 2)
    assert shown.names == ["resnet18_synthetic-seed0", "resnet18_synthetic-seed1"]
    assert all("experiments/resnet_cifar10.py" in argv for argv in shown.argvs)


def test_the_page_shows_the_rows_command_and_keys_their_records_by_row_name() -> None:
    unmeasured = render(Records({}, {}))
    cells = table_line(unmeasured, "resnet18_cifar_format")
    assert cells[1] == "`epoch=3`" and cells[4] == "not measured here"
    assert cells[11] == f"`{CIFAR_FORMAT}`"
    assert table_line(unmeasured, "resnet_cifar10")[4].startswith("not measured here: needs a GPU")
    measured = measurement([0.5, 0.6, 0.7], ["epoch=3"], SYNTHETIC)
    page = render(Records({"resnet18_synthetic": measured}, {}))
    assert table_line(page, "resnet18_synthetic")[3] == "3"
    assert table_line(page, "resnet_cifar10")[4].startswith("not measured here")


def test_a_measurement_writes_the_rows_data_before_its_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The data's seconds are not the runs' wall time."""
    ran: list[list[str]] = []

    def run_child(command: list[str]) -> Child:
        ran.append(command)
        return Child(wall_s=10.0 if len(ran) == 1 else 100.0, cpu_s=None, stdout="", started_at=0)

    monkeypatch.setattr(table_run, "run_child", run_child)
    monkeypatch.setattr(table_run.runs, "load", lambda path: path)
    monkeypatch.setattr(table_run, "score", lambda *args, **_: args)
    row = BY_NAME["resnet18_cifar_format"]
    _, _, command, stop, wall_s, _ = table_run.measure(row, 3)
    assert [argv[1] for argv in ran] == ["scripts/write_cifar_format.py", "-m"]
    assert (command, stop, wall_s) == (CIFAR_FORMAT, ("epoch=3",), 100.0)


def _read(directory: Path, name: str) -> tuple[np.ndarray, list[int]]:
    with (directory / name).open("rb") as file:
        batch = pickle.load(file, encoding="bytes")
    return batch[b"data"], batch[b"labels"]


def test_the_data_is_cifar10s_python_format_and_the_cifar10_loader_reads_it(
    tmp_path: Path,
) -> None:
    from rlsuite.supervised import SupervisedConfig
    from rlsuite.supervised.vision import check_cifar10, load_cifar10

    directory = write_cifar_format(tmp_path / "data", train_images=52, test_images=20)
    sizes = [len(_read(directory, f"data_batch_{i}")[1]) for i in range(1, 6)]
    assert sizes == [11, 11, 10, 10, 10]
    data, labels = _read(directory, "test_batch")
    assert data.dtype == np.uint8 and data.shape == (20, 3 * 32 * 32)
    assert labels == [i % 10 for i in range(20)]  # every class, as the synthetic set's
    config = SupervisedConfig(dataset="cifar10", data_path=str(directory), batch_size=16)
    check_cifar10(config)  # the launcher's check before Ray starts
    splits = load_cifar10(config)
    assert (len(splits.train), len(splits.validation)) == (52, 20)


def test_the_images_are_the_synthetic_sets_and_a_class_mean_tells_them_apart(
    tmp_path: Path,
) -> None:
    """Stored at 1/32 of the noise per grey level; nearest class means (from the training
    batches) label the test images far above chance: the task is learnable."""
    from rlsuite.supervised import SupervisedConfig
    from rlsuite.supervised.vision import load_synthetic

    directory = write_cifar_format(tmp_path, train_images=200, test_images=100)
    test_pixels, test_labels = _read(directory, "test_batch")
    config = SupervisedConfig(
        num_classes=10, image_size=32, synthetic_train_size=200, synthetic_val_size=100
    )
    first = load_synthetic(config).validation[0][0].numpy().reshape(-1)
    stored = (test_pixels[0].astype(float) - 128) / GREY_LEVELS_PER_UNIT
    unclipped = (test_pixels[0] > 0) & (test_pixels[0] < 255)
    assert np.abs(stored - first)[unclipped].max() <= 0.5 / GREY_LEVELS_PER_UNIT + 1e-6
    batches = [_read(directory, f"data_batch_{i}") for i in range(1, 6)]
    train = np.concatenate([pixels for pixels, _ in batches]).astype(float)
    train_labels = np.concatenate([labels for _, labels in batches])
    means = np.stack([train[train_labels == label].mean(axis=0) for label in range(10)])
    distances = ((test_pixels.astype(float)[:, None, :] - means[None]) ** 2).sum(axis=2)
    assert (distances.argmin(axis=1) == np.array(test_labels)).mean() > 0.9


def test_the_same_arguments_write_the_same_bytes(tmp_path: Path) -> None:
    names = [*(f"data_batch_{i}" for i in range(1, 6)), "test_batch"]
    assert main([str(tmp_path / "a"), "--train-images", "30", "--test-images", "10"]) == 0
    write_cifar_format(tmp_path / "b", train_images=30, test_images=10)
    write_cifar_format(tmp_path / "c", train_images=30, test_images=10, seed=1)
    for name in names:
        written = (tmp_path / "a" / name).read_bytes()
        assert written == (tmp_path / "b" / name).read_bytes()
        assert written != (tmp_path / "c" / name).read_bytes()  # another seed, other images
