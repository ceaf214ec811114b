"""Supervised runs through the CLI on data the tests write: CIFAR-10's python batches
(conftest's `cifar_sweep`, which the smoke matrix reads too), ImageFolder PNGs through Ray
Data interrupted and resumed, and the learnable synthetic task. The interrupted run joins
one Ray for this file (`--address`, conftest's `ray_cluster`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import ray.train
import torch

from rlsuite import metrics
from rlsuite.results import read_results
from rlsuite.supervised.checkpoint import load_model
from tests.helpers import ROOT, SupervisedSweep, evaluate_in_process, run_cli
from tests.ray_nodes import RayCluster
from tests.supervised_data import write_cifar, write_imagefolder

IMAGENET = ROOT / "experiments" / "resnet50_imagenet.py"
ONE_TRIAL = ("--num-samples", "1")


def test_trains_on_a_cifar_directory(cifar_sweep: SupervisedSweep) -> None:
    for trial in cifar_sweep.trials():
        assert trial["status"] == "OK" and trial["epochs"] == 2
        progress = _results(cifar_sweep.experiment_dir / trial["trial"])
        assert list(progress[metrics.EPOCH]) == [1, 2]
        # 40 training images (5 batches of 8), 8 test images: accuracy is a multiple of 1/8.
        assert set(progress[metrics.VALIDATION_ACCURACY] * 8) <= set(range(9))
        model, config = load_model(ray.train.Checkpoint.from_directory(trial["checkpoint"]))
        assert config.dataset == "cifar10" and config.data_path == str(cifar_sweep.data)
        with torch.no_grad():
            assert model(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


def test_evaluate_scores_the_checkpoint_as_the_run_did(cifar_sweep: SupervisedSweep) -> None:
    """A trial's latest checkpoint on its own validation split: the accuracy and loss the
    run reported for that trial's last epoch."""
    done = evaluate(cifar_sweep.experiment_dir)
    assert done.returncode == 0, done.stderr[-2000:]
    scored = [t for t in cifar_sweep.trials() if f"checkpoint {t['checkpoint']}" in done.stdout]
    assert len(scored) == 1, done.stdout
    last = _results(cifar_sweep.experiment_dir / scored[0]["trial"]).iloc[-1]
    accuracy, loss, examples = _scores(done.stdout)
    assert examples == 8
    assert accuracy == pytest.approx(last[metrics.VALIDATION_ACCURACY])
    assert loss == pytest.approx(last[metrics.VALIDATION_LOSS], rel=1e-3)


def test_evaluate_on_other_data(cifar_sweep: SupervisedSweep, tmp_path: Path) -> None:
    other = write_cifar(tmp_path / "other", per_batch=24, seed=1)
    checkpoint = cifar_sweep.trials()[0]["checkpoint"]
    done = evaluate(checkpoint, "--data-path", other, "--batch-size", "5")
    assert done.returncode == 0, done.stderr[-2000:]
    accuracy, loss, examples = _scores(done.stdout)
    assert examples == 24 and 0 <= accuracy <= 1 and loss > 0
    assert f"({other})" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data-path", "/nonexistent/cifar"], "does not exist"),
        (["--dataset", "sst2"], "model 'resnet18' is for image data"),
        (["--dataset", "cifar11"], "did you mean cifar10"),
        (["--video", "out.mp4"], "--video does not apply to this checkpoint"),
        (["--export", "onnx", "out"], "--export does not apply to this checkpoint"),
    ],
)
def test_evaluate_bad_input_is_one_line(
    cifar_sweep: SupervisedSweep, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, err = evaluate_in_process(capsys, cifar_sweep.experiment_dir, *args)
    assert code == 2, err
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def evaluate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rlsuite.evaluate", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)


def _scores(stdout: str) -> tuple[float, float, int]:
    """accuracy, loss, examples from `... accuracy A, loss L over N examples`."""
    line = next(line for line in stdout.splitlines() if " accuracy " in line)
    accuracy = float(line.split(" accuracy ")[1].split(",")[0])
    loss = float(line.split(", loss ")[1].split()[0])
    examples = int(line.split(" over ")[1].split()[0])
    return accuracy, loss, examples


# resnet50_imagenet.py has no scheduler (resnet_cifar10.py's smoke ASHA stops at 2 epochs).
CLASSES, TRAIN_PER_CLASS, VAL_PER_CLASS = 2, 64, 4  # epochs long enough to interrupt
RESUME_FLAGS = (
    "--smoke",
    *("--set", "dataset=imagefolder", "--set", f"num_classes={CLASSES}"),
    *("--set", "model=resnet18"),  # the data path and resume are under test, not ResNet-50
    *("--set", "epochs=4", "--stop", "epoch=4"),
    *ONE_TRIAL,
)


def test_interrupted_imagefolder_run_resumes_the_epoch_counter(
    tmp_path: Path, storage: Path, ray_cluster: RayCluster
) -> None:
    """An ImageFolder of PNGs read through Ray Data; Ctrl-C on the run, which joined a
    cluster (test_stop_signals.py stops runs that started their own Ray), then `--resume`
    on the same cluster. One run for both: each is a Train run of about a minute here."""
    root = write_imagefolder(
        tmp_path / "images", CLASSES, per_class=TRAIN_PER_CLASS, val_per_class=VAL_PER_CLASS
    )
    flags = (*RESUME_FLAGS, "--set", f"data_path={root}", "--address", ray_cluster.address)
    command = [sys.executable, "-m", "rlsuite.run", str(IMAGENET), *flags]
    process = subprocess.Popen(
        [*command, "--storage-path", str(storage)],
        cwd=ROOT,
        env=ray_cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 600
    # The first epoch's checkpoint written and its result logged (they land apart).
    while not (
        list(storage.glob("resnet50_imagenet/*/checkpoint_000000"))
        and any(path.stat().st_size for path in storage.glob("resnet50_imagenet/*/result.json"))
    ):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no checkpoint within 600 s"
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err[-2000:]
    (trial_dir,) = storage.glob("resnet50_imagenet/train_driver_*")
    interrupted = _results(trial_dir)[metrics.EPOCH].max()
    assert 1 <= interrupted < 4

    resumed = run_cli(IMAGENET, *flags, "--resume", storage=storage, env=ray_cluster.env)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    progress = _results(trial_dir)
    epochs = list(progress[metrics.EPOCH])
    assert epochs[-1] == 4
    assert epochs.count(1) == 1, f"the run restarted from scratch: {epochs}"
    assert epochs == sorted(epochs), epochs
    # Every one of the validation images (VAL_PER_CLASS of each class) classified once.
    images = CLASSES * VAL_PER_CLASS
    assert set((progress[metrics.VALIDATION_ACCURACY] * images).round(6)) <= set(range(images + 1))
    assert (progress[metrics.SAMPLES_PER_SECOND] > 0).all()
    (trial,) = resumed.summary("resnet50_imagenet")["trials"]
    _, config = load_model(ray.train.Checkpoint.from_directory(trial["checkpoint"]))
    assert config.dataset == "imagefolder" and config.num_classes == CLASSES


@pytest.mark.slow  # a 2-worker Train run (80-90 s here); CI checks the split alone
def test_two_workers_validate_each_image_once(
    tmp_path: Path, storage: Path, ray_cluster: RayCluster
) -> None:
    """5 validation images over 2 Train workers: Ray Data's equal split gave each 2 and
    left one out of the reported loss. The run's loss is the checkpoint's over all 5 (the
    workers validate with rank 0's BatchNorm statistics, which the checkpoint keeps)."""
    root = write_imagefolder(tmp_path / "images", classes=5, per_class=4, val_per_class=1)
    flags = (
        "--smoke",
        *("--set", "dataset=imagefolder", "--set", "num_classes=5", "--set", "model=resnet18"),
        *("--set", f"data_path={root}", "--set", "epochs=1", "--stop", "epoch=1", *ONE_TRIAL),
        # Half a CPU each: Ray Data reads the images with the CPU the workers leave.
        *("--set", "num_workers=2", "--set", "cpus_per_worker=0.5"),
    )
    run = run_cli(
        IMAGENET, *flags, "--address", ray_cluster.address, storage=storage, env=ray_cluster.env
    )
    assert run.returncode == 0, run.stderr[-2000:]
    (trial,) = run.summary("resnet50_imagenet")["trials"]
    reported = _results(storage / "resnet50_imagenet" / trial["trial"]).iloc[-1]
    done = evaluate(trial["checkpoint"])
    assert done.returncode == 0, done.stderr[-2000:]
    accuracy, loss, examples = _scores(done.stdout)
    assert examples == 5
    assert loss == pytest.approx(reported[metrics.VALIDATION_LOSS], rel=1e-3)
    assert accuracy == pytest.approx(reported[metrics.VALIDATION_ACCURACY])


@pytest.mark.slow
def test_learns_the_synthetic_task_above_chance(storage: Path) -> None:
    run = run_cli(
        IMAGENET,  # no scheduler: resnet_cifar10.py's smoke ASHA would stop at 2 epochs
        "--smoke",
        "--set",
        "model=resnet18",
        "--set",
        "cifar_stem=true",
        "--set",
        "num_classes=10",
        "--set",
        "synthetic_train_size=512",
        "--set",
        "synthetic_val_size=256",
        "--set",
        "epochs=4",
        "--set",
        "lr=0.05",
        "--stop",
        "epoch=4",
        *ONE_TRIAL,
        storage=storage,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (trial,) = run.summary("resnet50_imagenet")["trials"]
    # Ten classes: chance is 0.1.
    assert trial["best_validation_accuracy"] >= 0.5, trial


def _results(trial_dir: Path) -> pd.DataFrame:
    """result.json, one row per epoch reported."""
    return pd.json_normalize(read_results(trial_dir / "result.json"), sep="/")
