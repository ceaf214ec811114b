"""Supervised bad input is refused before Ray starts: one line, exit 2, nothing written;
flags and `--set` reach the SupervisedConfig typed. A data set's files: test_supervised_files.py."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import torch

from rlsuite.launcher.loader import load_experiment
from rlsuite.launcher.prepare import apply_flags
from rlsuite.launcher.smoke import smoke
from rlsuite.run import build_parser
from rlsuite.supervised import SupervisedConfig
from tests.helpers import ROOT, reject

CIFAR = ROOT / "experiments" / "resnet_cifar10.py"
IMAGENET = ROOT / "experiments" / "resnet50_imagenet.py"


def test_unknown_model_is_suggested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reject(
        capsys,
        tmp_path,
        CIFAR,
        "--smoke",
        "--set",
        "model=resnet19",
        needles=("unknown model 'resnet19'", "resnet18"),
    )


def test_unknown_dataset_is_suggested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reject(
        capsys,
        tmp_path,
        CIFAR,
        "--set",
        "dataset=cifar100",
        needles=("unknown dataset 'cifar100'", "cifar10"),
    )


def test_model_must_fit_the_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reject(
        capsys,
        tmp_path,
        CIFAR,
        "--smoke",
        "--set",
        "model=bert",
        needles=("'bert' is for text data", "synthetic_images"),
    )


@pytest.mark.parametrize(
    ("assignment", "needles"),
    [
        ("lrr=0.1", ("not a supervised setting", "did you mean lr")),
        ("training.lr=0.1", ("did you mean lr?",)),
        ("epochs=1.5", ("epochs must be a whole number", "1.5")),
        ("use_gpu=yes", ("use_gpu must be true or false", "'yes'")),
        ("optimizer=adam", ("optimizer must be one of sgd, adamw",)),
        ("lr=0", ("lr must be more than 0",)),
        ("batch_size=0", ("batch_size must be at least 1",)),
        ("seed=-1", ("seed must be a whole number from 0 to 4,294,967,295", "-1")),
        # Found by torch only inside the trial, or not at all (inf trains to NaN):
        ("weight_decay=1e999", ("weight_decay must be a finite number, got inf",)),
        ("momentum=1.0", ("momentum must be below 1",)),
        ("label_smoothing=1.5", ("label_smoothing must be 1 or less",)),
        ("lr={[]: 1}", ("lr must be a number", "'{[]: 1}'")),  # not a literal: a string
        # The smoke's 64 examples are 4 batches of 16: 8 to accumulate would never step.
        ("grad_accum_steps=8", ("grad_accum_steps 8 is more than", "never step")),
    ],
)
def test_bad_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], assignment: str, needles: tuple[str, ...]
) -> None:
    # resnet50_imagenet.py: resnet_cifar10.py searches lr and batch_size, so a --set of
    # them is refused before its value is looked at.
    reject(capsys, tmp_path, IMAGENET, "--smoke", "--set", assignment, needles=needles)


def test_env_runner_flags_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reject(
        capsys,
        tmp_path,
        CIFAR,
        "--smoke",
        "--num-env-runners",
        "2",
        needles=("no env runners", "--num-learners"),
    )


def test_gpus_this_machine_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.device_count() >= 64:
        pytest.skip("this machine has 64 GPUs")
    reject(
        capsys,
        tmp_path,
        IMAGENET,
        "--set",
        "num_workers=64",
        "--set",
        "use_gpu=true",
        needles=("needs 64 GPU(s)", "--address"),
    )


@pytest.mark.parametrize(
    ("stop", "needles"),
    [
        ("episode_return_mean=100", ("not a supervised result", "validation/accuracy")),
        # Tune stops at or above the value: a loss stop would end the trial when the loss
        # rises to it (after its first epoch, losses starting high), never when it falls.
        ("validation_loss=0.3", ("a loss stop would end it when its loss rises",)),
        ("train_loss=0.3", ("a loss stop would end it when its loss rises",)),
    ],
)
def test_a_stop_a_supervised_run_cannot_take_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stop: str, needles: tuple[str, ...]
) -> None:
    reject(capsys, tmp_path, CIFAR, "--smoke", "--stop", stop, needles=needles)


def _flags(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args([str(CIFAR), *argv])


def test_scaling_flags_map_onto_ray_train_workers() -> None:
    experiment = apply_flags(
        load_experiment(CIFAR),
        _flags("--num-learners", "4", "--num-gpus-per-learner", "1", "--num-cpus-per-learner", "6"),
    )
    config = experiment.config
    assert isinstance(config, SupervisedConfig)
    assert (config.num_workers, config.use_gpu, config.cpus_per_worker) == (4, True, 6.0)


def test_set_and_seed_reach_the_config() -> None:
    flags = _flags("--set", "lr=0.05", "--set", "data_path=/data/c10", "--seed", "7")
    config = apply_flags(load_experiment(IMAGENET), flags).config
    assert isinstance(config, SupervisedConfig)
    assert (config.lr, config.data_path, config.seed) == (0.05, "/data/c10", 7)  # absolute already
    assert isinstance(config.lr, float)


def test_set_reads_values_as_the_fields_types() -> None:
    flags = _flags("--set", "warmup_epochs=2", "--set", "data_path=2024", "--set", "lr=1")
    config = apply_flags(load_experiment(IMAGENET), flags).config
    assert isinstance(config, SupervisedConfig)
    assert config.warmup_epochs == 2.0 and isinstance(config.warmup_epochs, float)
    assert Path(str(config.data_path)).name == "2024" and config.lr == 1.0


def test_no_search_runs_the_files_own_values_and_lets_set_edit_them() -> None:
    """Without --no-search a `--set lr=...` is refused (the search sets lr in every trial);
    with it the sweep is one config: the file's values, edited by `--set`."""
    experiment = load_experiment(CIFAR)
    assert {"lr", "weight_decay", "batch_size"} <= set(experiment.search)
    flags = _flags("--no-search", "--num-samples", "1", "--seeds", "2", "--set", "lr=0.05")
    own = apply_flags(experiment, flags)
    assert own.search == {"seed": {"grid_search": [0, 1]}} and own.num_samples == 1
    assert isinstance(own.config, SupervisedConfig) and own.scheduler == experiment.scheduler
    assert (own.config.lr, own.config.weight_decay, own.config.batch_size) == (0.05, 5e-4, 128)
    assert apply_flags(experiment, _flags("--no-search")).num_samples == 1  # not the file's 8


def test_smoke_switches_to_synthetic_data_and_later_sets_still_apply() -> None:
    experiment = load_experiment(CIFAR)
    small = smoke(experiment)
    config = small.config
    assert isinstance(config, SupervisedConfig)
    assert (config.dataset, config.data_path) == ("synthetic_images", None)
    assert (config.num_workers, config.use_gpu, config.epochs) == (1, False, 2)
    assert config.model == "resnet18" and config.num_classes == 10  # the same task
    assert experiment.config.dataset == "cifar10"  # the input is untouched
    real = apply_flags(small, _flags("--set", "dataset=cifar10", "--set", "data_path=/d")).config
    assert isinstance(real, SupervisedConfig)
    assert (real.dataset, real.data_path, real.epochs) == ("cifar10", "/d", 2)


SEARCHED = """from ray import tune

from rlsuite import PBT, Experiment, metrics
from rlsuite.supervised import SupervisedConfig

experiment = Experiment(
    SupervisedConfig(dataset="synthetic_images", model="resnet18", num_classes=10),
    {metrics.EPOCH: 1},
    metric=metrics.VALIDATION_ACCURACY,
    {space},
)
"""


@pytest.mark.parametrize(
    ("space", "needles"),
    [
        # "adam" trained as SGD without a word: only "adamw" is Adam.
        ("search={'optimizer': tune.choice(['sgd', 'adam'])}", ("search optimizer='adam'",)),
        ("search={'batch_size': tune.grid_search([0, 64])}", ("batch_size=0", "at least 1")),
        ("scheduler=PBT({'momentum': [0.9, 1.2]})", ("PBT momentum=1.2", "below 1")),
        pytest.param(
            "search={'use_gpu': tune.choice([False, True])}",
            ("use_gpu=True", "GPU"),
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU"),
        ),
    ],
)
def test_a_searched_value_that_cannot_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], space: str, needles: tuple[str, ...]
) -> None:
    """Only the config's own values were checked; Tune draws the searched ones inside the
    trials, where a bad one failed its trial, trained another optimizer, or waited for a
    GPU with no end."""
    path = tmp_path / "searched.py"
    path.write_text(SEARCHED.replace("{space}", space))
    line = reject(capsys, tmp_path, path, needles=needles)
    assert "change it there" in line


def test_a_range_is_checked_below_its_upper_end(tmp_path: Path) -> None:
    """tune.uniform never draws its upper end: momentum up to 1.0 is searchable, though
    momentum 1.0 itself is refused."""
    from rlsuite.launcher.prepare import load_and_prepare
    from rlsuite.options import RunOptions

    path = tmp_path / "searched.py"
    path.write_text(SEARCHED.replace("{space}", "search={'momentum': tune.uniform(0.8, 1.0)}"))
    prepared = load_and_prepare(path, RunOptions(storage_path=str(tmp_path / "results")))
    assert "momentum" in prepared.experiment.search
