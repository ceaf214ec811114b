"""Images per second of ResNet-18 on 32x32 images: the suite's Ray Train loop (a full
`rlsuite.run` on synthetic data, one Train worker) against a plain PyTorch loop with the
same model, optimizer, schedule, batch and data in this process, in one invocation.

Both sides time the same thing: the training pass of one epoch (loading batches,
forward, backward, optimizer and schedule steps), the last of `epochs` epochs so that
start-up and the first epoch's allocations are left out. The suite's figure is the
`train/samples_per_second` it reports; the figure to read is the ratio.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader

from benchmarks.common import (
    EXPERIMENTS,
    load_line,
    machine,
    ratio_of_medians,
    ratio_text,
    rounds_title,
    run_child,
    spread,
    spread_note,
)
from rlsuite import metrics
from rlsuite.results import read_results
from rlsuite.supervised import SupervisedConfig, optim
from rlsuite.supervised.vision import build_resnet18, load_synthetic

# No search space or scheduler: every setting comes from `bench_config` through --set.
EXPERIMENT = EXPERIMENTS / "resnet50_imagenet.py"
NAME = "bench_train"


@dataclass(frozen=True)
class TrainBench:
    images: int
    batch_size: int
    epochs: int
    device: str
    suite_rounds: list[float]
    plain_rounds: list[float]
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]

    @property
    def suite_images_per_s(self) -> float:
        return statistics.median(self.suite_rounds)

    @property
    def plain_images_per_s(self) -> float:
        return statistics.median(self.plain_rounds)

    @property
    def ratio(self) -> float | None:
        """Median images/s, rlsuite / plain; None where a side's rounds disagree."""
        return ratio_of_medians(self.suite_rounds, self.plain_rounds)

    def report(self) -> str:
        ratio = ratio_text(self.ratio, "9.3f")
        plain, suite = spread_note(self.plain_rounds, _fmt), spread_note(self.suite_rounds, _fmt)
        return (
            f"ResNet-18, 32x32 images, batch {self.batch_size}, {self.images} images per epoch, "
            f"{self.device}, last of {self.epochs} epochs, {rounds_title(len(self.suite_rounds))}:\n"
            f"  plain PyTorch loop       {self.plain_images_per_s:9.1f} images/s{plain}\n"
            f"  rlsuite Ray Train loop   {self.suite_images_per_s:9.1f} images/s{suite}\n"
            f"  ratio rlsuite / plain    {ratio}  (goal >= 0.95)\n"
            f"  {load_line(self.machine_before, self.machine_after)}"
        )

    def to_json(self) -> dict[str, Any]:
        figures = {
            "suite_images_per_s": self.suite_images_per_s,
            "plain_images_per_s": self.plain_images_per_s,
            "ratio": self.ratio,
            # The ratio is null only where rounds disagree: `noisy` says so for a reader of JSON.
            "noisy": self.ratio is None,
            "spread": {
                "suite_images_per_s": spread(self.suite_rounds),
                "plain_images_per_s": spread(self.plain_rounds),
            },
        }
        return {**asdict(self), **figures}


def bench_config(images: int, batch_size: int, epochs: int, gpu: bool) -> SupervisedConfig:
    """What both sides train: `resnet_cifar10.py`'s model (ResNet-18, CIFAR stem) on
    synthetic 32x32 images; every field is passed to the suite with --set."""
    return SupervisedConfig(
        model="resnet18",
        cifar_stem=True,
        dataset="synthetic_images",
        num_classes=10,
        image_size=32,
        epochs=epochs,
        batch_size=batch_size,
        lr=0.1,
        lr_schedule="cosine",
        loader_workers=0,
        use_gpu=gpu,
        cpus_per_worker=1.0,
        synthetic_train_size=images,
        synthetic_val_size=batch_size,
    )


def measure(
    images: int, batch_size: int, epochs: int, gpu: bool = False, rounds: int = 3
) -> TrainBench:
    """Both sides `rounds` times, alternating, so that load on the machine hits both."""
    config = bench_config(images, batch_size, epochs, gpu)
    suite, plain = [], []
    before = machine()
    for _ in range(rounds):
        suite.append(suite_images_per_second(config))
        plain.append(plain_images_per_second(config))
    device = torch.cuda.get_device_name() if gpu else "CPU, 1 thread"
    return TrainBench(images, batch_size, epochs, device, suite, plain, before, machine())


def suite_images_per_second(config: SupervisedConfig) -> float:
    """`python -m rlsuite.run experiments/resnet50_imagenet.py` with every setting of
    `config` given by --set (that file has no search space that would override them)."""
    sets = [f"{key}={value}" for key, value in config.to_dict().items() if value is not None]
    with tempfile.TemporaryDirectory() as storage:
        command = [sys.executable, "-m", "rlsuite.run", str(EXPERIMENT), "--num-samples", "1"]
        command += ["--name", NAME, "--storage-path", storage, "--stop", f"epoch={config.epochs}"]
        for assignment in sets:
            command += ["--set", assignment]
        run_child(command)
        (result,) = Path(storage, NAME).glob("*/result.json")
        return last_samples_per_second(result)


def last_samples_per_second(result_json: Path) -> float:
    return float(read_results(result_json)[-1][metrics.SAMPLES_PER_SECOND])


def plain_images_per_second(config: SupervisedConfig) -> float:
    """The same training in a hand-written loop: the model, optimizer, schedule, data
    loader and precision the suite uses, without Ray."""
    torch.set_num_threads(max(1, int(config.cpus_per_worker)))
    torch.manual_seed(config.seed)
    device = torch.device("cuda" if config.use_gpu else "cpu")
    memory_format = torch.channels_last if config.channels_last else torch.contiguous_format
    model = build_resnet18(config).to(device).to(memory_format=memory_format)
    optimizer = optim.build_optimizer(config, model.parameters())
    loader = DataLoader(
        load_synthetic(config).train,
        batch_size=config.batch_size,
        shuffle=True,
        pin_memory=config.use_gpu,
        drop_last=True,  # as the suite's loop does
    )
    scheduler = optim.build_scheduler(config, optimizer, len(loader))
    loss_fn = torch.nn.CrossEntropyLoss()
    bf16 = config.use_gpu and config.precision == "bf16"
    per_second = 0.0
    for _ in range(config.epochs):
        start, seen = time.perf_counter(), 0
        for images, labels in loader:
            images = images.to(device, non_blocking=True).contiguous(memory_format=memory_format)
            labels = labels.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                loss = loss_fn(model(images), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            seen += labels.shape[0]
        if config.use_gpu:
            torch.cuda.synchronize()
        per_second = seen / (time.perf_counter() - start)
    return per_second


def _fmt(value: float) -> str:
    return f"{value:.1f}"
