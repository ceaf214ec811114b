"""BERT training throughput: the suite's Ray Train loop against a plain PyTorch loop.

Both train the same `BertForSequenceClassification` (tiny or base) with the same AdamW and
linear schedule on the same tokenized synthetic sentences, padded to the same sequence
length, in batches of the same size from the same DataLoader and collate, on the same
number of threads (or one GPU with bf16 autocast, `--gpu`). The suite's figure is the
loop's own `train/samples_per_second` of its last epoch (the first warms up); the plain
loop times an epoch after one warm-up epoch. Rounds alternate the two so that load from
other processes falls on both. The vocabulary is the synthetic task's (~160 WordPiece
tokens), so the embedding table is smaller than BERT's 30,522 rows; the encoder, which
does nearly all the work at sequence 128, is the full size.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import DataLoader

from benchmarks.common import (
    load_line,
    machine,
    ratio_of_medians,
    ratio_text,
    rounds_title,
    spread,
    spread_note,
)
from rlsuite import metrics
from rlsuite.supervised import optim
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.text import load_synthetic
from rlsuite.supervised.text_model import bert_from_config


@dataclass(frozen=True)
class TextBenchResult:
    size: str
    seq_length: int
    batch_size: int
    device: str
    plain: list[float]
    """Samples per second of the plain loop, one per round."""
    suite: list[float]
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]

    @property
    def ratio(self) -> float | None:
        """Median suite / median plain throughput (1.0: the suite costs nothing); None
        where a side's rounds disagree."""
        return ratio_of_medians(self.suite, self.plain)

    def report(self) -> str:
        ratio = ratio_text(self.ratio, "10.2f")
        # Each side on a line of its own: with its spread, one line would run past 150 chars.
        return (
            f"BERT-{self.size} seq {self.seq_length} batch {self.batch_size}, {self.device}, "
            f"{rounds_title(len(self.plain))}:\n"
            f"  plain PyTorch            {statistics.median(self.plain):10,.2f} samples/s"
            f"{spread_note(self.plain, _fmt)}\n"
            f"  suite's Ray Train loop   {statistics.median(self.suite):10,.2f} samples/s"
            f"{spread_note(self.suite, _fmt)}\n"
            f"  ratio suite / plain      {ratio}\n"
            f"  {load_line(self.machine_before, self.machine_after)}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "seq_length": self.seq_length,
            "batch_size": self.batch_size,
            "device": self.device,
            "plain_samples_per_second": self.plain,
            "suite_samples_per_second": self.suite,
            "ratio": self.ratio,
            # The ratio is null only where rounds disagree: `noisy` says so for a reader of JSON.
            "noisy": self.ratio is None,
            "spread": {
                "plain_samples_per_second": spread(self.plain),
                "suite_samples_per_second": spread(self.suite),
            },
            "machine_before": self.machine_before,
            "machine_after": self.machine_after,
        }


def bench_config(
    size: str, seq_length: int, batch_size: int, samples: int, threads: int, gpu: bool = False
) -> SupervisedConfig:
    """Two epochs of `samples` synthetic sentences on one Train worker (CPU, or one GPU
    with the suite's bf16 autocast)."""
    return SupervisedConfig(
        model="bert",
        model_size=size,  # type: ignore[arg-type]  # checked by BERT_SIZES
        dataset="synthetic_text",
        num_classes=2,
        max_seq_length=seq_length,
        epochs=2,
        batch_size=batch_size,
        optimizer="adamw",
        lr=5e-5,
        weight_decay=0.01,
        lr_schedule="linear",
        num_workers=1,
        use_gpu=gpu,
        cpus_per_worker=float(threads),
        loader_workers=0,
        synthetic_train_size=samples,
        synthetic_val_size=batch_size,
    )


def plain_samples_per_second(config: SupervisedConfig) -> float:
    samples, seconds = plain_epoch(config)
    return samples / seconds


def plain_epoch(config: SupervisedConfig) -> tuple[int, float]:
    """A hand-written training loop: warm-up epochs, then the samples and seconds of the
    last epoch."""
    torch.set_num_threads(int(config.cpus_per_worker))
    torch.manual_seed(config.seed)
    device = torch.device("cuda" if config.use_gpu else "cpu")
    splits = load_synthetic(config, None)
    model: torch.nn.Module = bert_from_config(
        config.model_size,
        splits.model_kwargs["vocab_size"],
        splits.model_kwargs["num_labels"],
        config.max_seq_length,
    )
    model.to(device)
    loader = DataLoader(
        splits.train,
        batch_size=config.batch_size,
        shuffle=True,
        collate_fn=splits.collate_fn,
        pin_memory=config.use_gpu,
    )
    bf16 = config.use_gpu and config.precision == "bf16"
    optimizer = optim.build_optimizer(config, model.parameters())
    scheduler = optim.build_scheduler(config, optimizer, len(loader))
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    samples, seconds = 0, 0.0
    for _ in range(config.epochs):
        samples, start = 0, time.perf_counter()
        for batch, targets in loader:
            inputs = {name: tensor.to(device, non_blocking=True) for name, tensor in batch.items()}
            labels = targets.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                loss = loss_fn(model(**inputs).logits, labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            samples += len(labels)
        if config.use_gpu:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    return samples, seconds


def suite_samples_per_second(config: SupervisedConfig) -> float:
    """The suite's `train_loop_per_worker` in a Ray Train `TorchTrainer`, as a trial runs
    it; its last epoch's reported throughput."""
    import ray.train
    from ray.train.torch import TorchTrainer

    from rlsuite.supervised.loop import train_loop_per_worker
    from rlsuite.supervised.trainable import scaling_config

    with tempfile.TemporaryDirectory() as storage:
        trainer = TorchTrainer(
            train_loop_per_worker,
            train_loop_config={
                "config": config.to_dict(),
                "checkpoint": None,
                "checkpoint_every": config.epochs + 1,  # one checkpoint, after the timing
            },
            scaling_config=scaling_config(config),
            run_config=ray.train.RunConfig(name="bench_text", storage_path=storage),
        )
        result = trainer.fit()
    assert result.metrics is not None, "the Train run reported nothing"
    return float(result.metrics[metrics.SAMPLES_PER_SECOND])


def measure(
    size: str = "tiny",
    seq_length: int = 128,
    batch_size: int = 32,
    samples: int = 512,
    rounds: int = 3,
    threads: int = 1,
    gpu: bool = False,
) -> TextBenchResult:
    """Alternating rounds of the plain loop and the suite's loop in one Ray session."""
    import ray

    config = bench_config(size, seq_length, batch_size, samples, threads, gpu)
    before = machine()  # the machine as found, before this benchmark starts a Ray of its own
    started = not ray.is_initialized()
    if started:
        # A Ray of its own even where `ray start` left a cluster on the machine.
        ray.init(
            address="local", num_cpus=max(threads, 1), include_dashboard=False, log_to_driver=False
        )
    plain: list[float] = []
    suite: list[float] = []
    try:
        for _ in range(rounds):
            plain.append(plain_samples_per_second(config))
            suite.append(suite_samples_per_second(config))
    finally:
        if started:
            ray.shutdown()
    device = torch.cuda.get_device_name() if gpu else f"CPU, {threads} thread(s)"
    return TextBenchResult(size, seq_length, batch_size, device, plain, suite, before, machine())


def _fmt(value: float) -> str:
    return f"{value:,.2f}"
