"""Supervised bad input is refused before Ray starts: one line, exit 2, nothing written;
flags and `--set` reach the SupervisedConfig typed."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from rlsuite.launcher.loader import load_experiment
from rlsuite.launcher.prepare import apply_flags
from rlsuite.launcher.smoke import smoke
from rlsuite.run import build_parser
from rlsuite.supervised import SupervisedConfig, batches, imagefolder
from tests.helpers import ROOT, assert_rejected, run_main
from tests.supervised_data import write_cifar, write_imagefolder

CIFAR = ROOT / "experiments" / "resnet_cifar10.py"
IMAGENET = ROOT / "experiments" / "resnet50_imagenet.py"


def _reject(capsys, tmp_path: Path, experiment: Path, *args: str, needles: tuple[str, ...]) -> str:
    storage = tmp_path / "results"
    code = run_main(experiment, *args, storage=storage)
    return assert_rejected(capsys, code, storage, *needles)


def test_missing_data_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    _reject(
        capsys,
        tmp_path,
        CIFAR,
        "--set",
        f"data_path={missing}",
        needles=("cifar10", str(missing), "does not exist", "cifar-10-batches-py"),
    )


def test_default_data_path_missing_names_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _reject(capsys, tmp_path, CIFAR, needles=("data/cifar-10-batches-py", "does not exist"))


def test_empty_data_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    _reject(capsys, tmp_path, CIFAR, "--set", f"data_path={empty}", needles=("is empty",))


def test_data_path_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "cifar.tar.gz"
    file.write_bytes(b"\x1f\x8b not extracted")
    _reject(capsys, tmp_path, CIFAR, "--set", f"data_path={file}", needles=("is a file",))


def test_cifar_wrong_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "pngs"
    directory.mkdir()
    (directory / "0001.png").write_bytes(b"png")
    _reject(
        capsys,
        tmp_path,
        CIFAR,
        "--set",
        f"data_path={directory}",
        needles=("lacks data_batch_1, data_batch_2", "test_batch (CIFAR-10 has"),
    )


def test_cifar_with_a_training_batch_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Part of the training set would train on part of the data without a word."""
    directory = write_cifar(tmp_path / "cifar")
    (directory / "data_batch_3").unlink()
    sets = ("--set", f"data_path={directory}")
    _reject(capsys, tmp_path, CIFAR, *sets, needles=("lacks data_batch_3 (CIFAR-10 has",))


@pytest.mark.parametrize("damaged", ["test_batch", "data_batch_4"])
def test_cifar_wrong_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damaged: str
) -> None:
    directory = write_cifar(tmp_path / "cifar")
    (directory / damaged).write_text("not a pickle\n")
    sets = ("--set", f"data_path={directory}")
    needles = (f"{damaged} is not a CIFAR-10 python batch",)
    _reject(capsys, tmp_path, CIFAR, *sets, needles=needles)


def test_cifar_with_another_class_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = write_cifar(tmp_path / "cifar")
    sets = ("--set", f"data_path={directory}", "--set", "num_classes=5")
    needles = ("cifar10 has 10 classes but num_classes is 5", "--set num_classes=10")
    _reject(capsys, tmp_path, CIFAR, *sets, needles=needles)


def test_unknown_model_is_suggested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _reject(
        capsys,
        tmp_path,
        CIFAR,
        "--smoke",
        "--set",
        "model=resnet19",
        needles=("unknown model 'resnet19'", "resnet18"),
    )


def test_unknown_dataset_is_suggested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _reject(
        capsys,
        tmp_path,
        CIFAR,
        "--set",
        "dataset=cifar100",
        needles=("unknown dataset 'cifar100'", "cifar10"),
    )


def test_model_must_fit_the_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _reject(
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
    _reject(capsys, tmp_path, IMAGENET, "--smoke", "--set", assignment, needles=needles)


def test_env_runner_flags_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _reject(
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
    _reject(
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
    _reject(capsys, tmp_path, CIFAR, "--smoke", "--stop", stop, needles=needles)


def test_imagefolder_without_splits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "images"
    (root / "cats").mkdir(parents=True)
    (root / "cats" / "1.png").write_bytes(b"png")
    _reject(
        capsys,
        tmp_path,
        IMAGENET,
        "--set",
        f"data_path={root}",
        "--set",
        "use_gpu=false",
        needles=("no", "train directory", "train/<class>"),
    )


def test_imagefolder_class_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_imagefolder(tmp_path / "images", classes=3, per_class=1)
    _reject(
        capsys,
        tmp_path,
        IMAGENET,
        "--set",
        f"data_path={root}",
        "--set",
        "use_gpu=false",
        needles=("3 class folders but num_classes is 1000", "--set num_classes=3"),
    )


@pytest.mark.parametrize(
    ("misplaced", "needles"),
    [
        ("train/1.png", ("train/1.png is not in a class folder", "train/<class>/")),
        ("val/class_1/more/1.png", ("class_1/more is a folder inside a class folder",)),
    ],
)
def test_imagefolder_images_out_of_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], misplaced: str, needles: tuple[str, ...]
) -> None:
    """Ray's directory partitioning takes the class from one folder level: an image beside
    the class folders, or in a folder inside one, would fail inside the trial."""
    root = write_imagefolder(tmp_path / "images", classes=2, per_class=1)
    (root / misplaced).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(root / "train" / "class_0" / "0.png", root / misplaced)
    _reject(capsys, tmp_path, IMAGENET, *_imagefolder_sets(root, classes=2), needles=needles)


def test_imagefolder_counts_suffixes_in_any_case_as_ray_data_reads_them(tmp_path: Path) -> None:
    """`.JPG` and `.PNG` files are read by Ray Data; counted otherwise, the epoch's step
    count (and so the learning-rate schedule) would be short."""
    root = write_imagefolder(tmp_path / "images", classes=2, per_class=3)
    for image in root.glob("*/*/*.png"):
        image.rename(image.with_suffix(".PNG"))
    config = SupervisedConfig(dataset="imagefolder", data_path=str(root), num_classes=2)
    imagefolder.check_imagefolder(config)  # not "holds no images"
    assert imagefolder._count_images(root / "train" / "class_0") == 3


def _imagefolder_sets(root: Path, classes: int) -> tuple[str, ...]:
    return (
        *("--set", f"data_path={root}", "--set", f"num_classes={classes}"),
        *("--set", "use_gpu=false"),
    )


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


def test_optimizer_steps_count_each_workers_share() -> None:
    """A worker's DataLoader keeps a last short batch when its share is under one batch:
    64 examples over 2 workers in global batches of 128 are one batch of 32 each."""
    config = SupervisedConfig(batch_size=128)
    assert batches.optimizer_steps(64, config, workers=2) == 1
    assert batches.optimizer_steps(64, config.replace(grad_accum_steps=2), workers=2) == 0
    assert batches.optimizer_steps(1000, config, workers=2) == 1000 // 2 // 64  # drops the rest


def test_training_order_follows_the_seed_and_epoch_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each trial's seed draws its own data order, each epoch a new one, and the same
    seed and epoch the same one again (a resumed run replays no earlier epoch's order)."""
    import torch
    from torch.utils.data import TensorDataset

    from rlsuite.supervised.registry import Splits

    class OneWorker:
        def get_world_size(self) -> int:
            return 1

        def get_world_rank(self) -> int:
            return 0

    monkeypatch.setattr(batches.ray.train, "get_context", OneWorker)
    data = TensorDataset(torch.arange(64).float(), torch.arange(64))
    splits = Splits(train=data, validation=data)

    def order(seed: int, epoch: int) -> list[int]:
        config = SupervisedConfig(batch_size=16, seed=seed)
        epoch_batches = batches.epoch_batches(splits, config, train=True)
        return [int(label) for _, labels in epoch_batches(epoch) for label in labels]

    torch.manual_seed(123)  # the global RNG does not decide it
    first = order(seed=0, epoch=1)
    assert sorted(first) == list(range(64))
    torch.manual_seed(456)
    assert order(seed=0, epoch=1) == first
    assert order(seed=0, epoch=2) != first
    assert order(seed=1, epoch=1) != first
