"""A supervised data set's files, refused before Ray starts where they cannot train as
asked (missing, damaged, partial, misplaced: one line, exit 2, nothing written) and
counted as Ray Data reads them; the batches and optimizer steps each worker makes."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from rlsuite.supervised import SupervisedConfig, batches, imagefolder
from tests.helpers import ROOT, reject
from tests.supervised_data import write_cifar, write_imagefolder

CIFAR = ROOT / "experiments" / "resnet_cifar10.py"
IMAGENET = ROOT / "experiments" / "resnet50_imagenet.py"


def test_missing_data_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    reject(
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
    reject(capsys, tmp_path, CIFAR, needles=("data/cifar-10-batches-py", "does not exist"))


def test_empty_data_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    reject(capsys, tmp_path, CIFAR, "--set", f"data_path={empty}", needles=("is empty",))


def test_data_path_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "cifar.tar.gz"
    file.write_bytes(b"\x1f\x8b not extracted")
    reject(capsys, tmp_path, CIFAR, "--set", f"data_path={file}", needles=("is a file",))


def test_cifar_wrong_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "pngs"
    directory.mkdir()
    (directory / "0001.png").write_bytes(b"png")
    reject(
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
    reject(capsys, tmp_path, CIFAR, *sets, needles=("lacks data_batch_3 (CIFAR-10 has",))


@pytest.mark.parametrize("damaged", ["test_batch", "data_batch_4"])
def test_cifar_wrong_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damaged: str
) -> None:
    directory = write_cifar(tmp_path / "cifar")
    (directory / damaged).write_text("not a pickle\n")
    sets = ("--set", f"data_path={directory}")
    needles = (f"{damaged} is not a CIFAR-10 python batch",)
    reject(capsys, tmp_path, CIFAR, *sets, needles=needles)


def test_cifar_with_another_class_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = write_cifar(tmp_path / "cifar")
    sets = ("--set", f"data_path={directory}", "--set", "num_classes=5")
    needles = ("cifar10 has 10 classes but num_classes is 5", "--set num_classes=10")
    reject(capsys, tmp_path, CIFAR, *sets, needles=needles)


def test_imagefolder_without_splits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "images"
    (root / "cats").mkdir(parents=True)
    (root / "cats" / "1.png").write_bytes(b"png")
    needles = ("no", "train directory", "train/<class>")
    reject(capsys, tmp_path, IMAGENET, *_imagefolder_sets(root), needles=needles)


def test_imagefolder_class_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_imagefolder(tmp_path / "images", classes=3, per_class=1)
    needles = ("3 class folders but num_classes is 1000", "--set num_classes=3")
    reject(capsys, tmp_path, IMAGENET, *_imagefolder_sets(root), needles=needles)


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
    reject(capsys, tmp_path, IMAGENET, *_imagefolder_sets(root, classes=2), needles=needles)


def test_imagefolder_counts_suffixes_in_any_case_as_ray_data_reads_them(tmp_path: Path) -> None:
    """`.JPG` and `.PNG` files are read by Ray Data; counted otherwise, the epoch's step
    count (and so the learning-rate schedule) would be short."""
    root = write_imagefolder(tmp_path / "images", classes=2, per_class=3)
    for image in root.glob("*/*/*.png"):
        image.rename(image.with_suffix(".PNG"))
    config = SupervisedConfig(dataset="imagefolder", data_path=str(root), num_classes=2)
    imagefolder.check_imagefolder(config)  # not "holds no images"
    assert imagefolder._count_images(root / "train" / "class_0") == 3


def test_imagefolder_skips_what_ray_data_skips(tmp_path: Path) -> None:
    """Ray Data lists no folder below the one it reads whose name starts with "." or "_":
    a notebook's checkpoint folder counted as a class ("has 4 class folders ... --set
    num_classes=4", the wrong fix)."""
    root = write_imagefolder(tmp_path / "images", classes=2, per_class=3)
    for split in ("train", "val"):
        (root / split / ".ipynb_checkpoints").mkdir()
        shutil.copytree(root / split / "class_0", root / split / "_unsorted")
    config = SupervisedConfig(dataset="imagefolder", data_path=str(root), num_classes=2)
    imagefolder.check_imagefolder(config)  # 2 classes, not 4
    assert imagefolder.class_names(root / "train") == ["class_0", "class_1"]


def test_imagefolder_too_small_for_one_optimizer_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Train workers refused it, once Ray ran; the check before Ray counts the images."""
    root = write_imagefolder(tmp_path / "images", classes=2, per_class=8)
    sets = (*_imagefolder_sets(root, classes=2), "--set", "batch_size=16")
    needles = ("grad_accum_steps 4 is more than the batches", "16 training examples")
    reject(capsys, tmp_path, IMAGENET, *sets, "--set", "grad_accum_steps=4", needles=needles)


def test_imagefolder_workers_that_leave_ray_data_no_cpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ray Data reads in tasks of a CPU beside the Train workers: with every CPU reserved
    the read never started, and the run waited without an end (2 workers of 1 CPU on 2)."""
    root = write_imagefolder(tmp_path / "images", classes=2, per_class=1)
    cpus = os.cpu_count() or 1
    sets = (*_imagefolder_sets(root, classes=2), "--set", f"cpus_per_worker={cpus}")
    needles = ("read by Ray Data in tasks of 1 CPU", f"of this machine's {cpus} CPUs")
    reject(capsys, tmp_path, IMAGENET, *sets, needles=needles)


def _imagefolder_sets(root: Path, classes: int | None = None) -> tuple[str, ...]:
    """`--set`s for an image folder at `root` on CPU; `classes` None keeps the file's."""
    count = ("--set", f"num_classes={classes}") if classes is not None else ()
    return ("--set", f"data_path={root}", *count, "--set", "use_gpu=false")


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


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_validation_sees_each_example_once_over_the_workers(
    monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """10 examples over 3 workers are shares of 4, 3 and 3: torch's DistributedSampler
    would hand out 4 each, repeating 2 examples into the summed validation totals."""
    assert sorted(validation_labels(10, workers, monkeypatch)) == list(range(10))


def test_validation_smaller_than_the_workers_leaves_one_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2 examples over 3 workers: each once, the third worker none (validation runs
    outside DDP, whose first forward pass would broadcast buffers: a collective that a
    worker without a batch would never join)."""
    assert sorted(validation_labels(2, 3, monkeypatch)) == [0, 1]


def validation_labels(examples: int, workers: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The labels each of `workers` workers validates on, all together."""
    import torch
    from torch.utils.data import TensorDataset

    from rlsuite.supervised.registry import Splits

    data = TensorDataset(torch.arange(examples).float(), torch.arange(examples))
    splits = Splits(train=data, validation=data)
    config = SupervisedConfig(batch_size=4 * workers, num_workers=workers)
    seen: list[int] = []
    for rank in range(workers):

        class Worker:
            def get_world_size(self) -> int:
                return workers

            def get_world_rank(self, rank: int = rank) -> int:
                return rank

        monkeypatch.setattr(batches.ray.train, "get_context", Worker)
        validation = batches.epoch_batches(splits, config, train=False)
        seen += [int(label) for _, labels in validation(3) for label in labels]
    return seen


def test_ray_data_validation_shards_hold_each_row_once() -> None:
    """Ray Train's own DataConfig splits with equal=True: 5 rows over 2 workers were 2
    each, one row left out of the summed validation totals. Training keeps that split."""
    import ray.data

    from rlsuite.supervised.validation_split import ExactValidation
    from tests.helpers import local_ray

    with local_ray():
        datasets = {"train": ray.data.range(5), "validation": ray.data.range(5)}
        shards = ExactValidation().configure(datasets, 2, None, None)
        seen: dict[str, list[list[int]]] = {"train": [[], []], "validation": [[], []]}

        def read(name: str, rank: int) -> None:  # a streaming split is read side by side
            for row in shards[rank][name].iter_rows():
                seen[name][rank].append(int(row["id"]))

        for name in seen:
            threads = [threading.Thread(target=read, args=(name, r)) for r in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
    assert sorted(seen["validation"][0] + seen["validation"][1]) == [0, 1, 2, 3, 4]
    assert [len(rows) for rows in seen["train"]] == [2, 2]  # equal, one row left out
