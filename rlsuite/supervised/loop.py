"""The one Ray Train loop every supervised experiment runs, on each Train worker.

`train_loop_per_worker` trains `config.epochs` epochs data-parallel (DDP through
`ray.train.torch.prepare_model`, a DistributedSampler through `prepare_data_loader` or a
Ray Data shard), evaluates on the validation split, and reports one result per epoch with
a checkpoint (model, optimizer, scheduler, epoch) through `ray.train.report`. It starts
from `ray.train.get_checkpoint()` (a restarted worker group) or from the checkpoint the
Tune trial was restored with (`--resume`, a PBT exploit), then applies the trial's config.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ray.train
import ray.train.torch
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from rlsuite import metrics
from rlsuite.supervised import checkpoint as checkpoint_files
from rlsuite.supervised import optim, registry
from rlsuite.supervised.batches import check_steps, epoch_batches, optimizer_steps, to_device
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.training_state import Run


def train_loop_per_worker(loop_config: dict[str, Any]) -> None:
    """Ray Train's per-worker function; `loop_config` holds `config` (SupervisedConfig
    fields), `checkpoint` (a `ray.train.Checkpoint` to start from, or None),
    `checkpoint_every` (epochs) and, for Ray Data sets, `splits` (the driver's Splits
    without the data)."""
    config = SupervisedConfig.from_dict(loop_config["config"])
    # An elastic run has as many workers as Train could start: the global batch splits
    # over those (SupervisedConfig.max_workers).
    config = config.replace(num_workers=ray.train.get_context().get_world_size())
    torch.set_num_threads(max(1, int(config.cpus_per_worker)))
    torch.manual_seed(config.seed)  # the same initial weights on every worker
    start = ray.train.get_checkpoint() or loop_config.get("checkpoint")
    run = _build(config, loop_config, start)
    done = checkpoint_files.restore(start, run) if start is not None else 0
    optim.check_follows_config(config, run.optimizer, run.scheduler.last_epoch, run.steps_per_epoch)
    for epoch in range(done + 1, config.epochs + 1):
        result = train_epoch(run, epoch)
        result.update(evaluate(run))
        optim.check_follows_config(
            config, run.optimizer, run.scheduler.last_epoch, run.steps_per_epoch
        )
        result[metrics.TRAIN_LEARNING_RATE] = run.optimizer.param_groups[0]["lr"]
        result[metrics.WORKERS] = config.num_workers
        result[metrics.EPOCH] = epoch
        every = int(loop_config.get("checkpoint_every", 1))
        _report(result, run, epoch, checkpoint=epoch % every == 0 or epoch == config.epochs)


def _build(
    config: SupervisedConfig, loop_config: dict[str, Any], start: ray.train.Checkpoint | None
) -> Run:
    entry = registry.dataset_entry(config.dataset)
    if entry.ray_data:  # loaded by the driver; Ray Train hands each worker its shard
        splits = dataclasses.replace(
            loop_config["splits"],
            train=ray.train.get_dataset_shard("train"),
            validation=ray.train.get_dataset_shard("validation"),
        )
        train_size = int(splits.train_size or 0)
    else:
        splits = registry.load(config, start)  # a tokenizer comes back with its weights
        train_size = len(splits.train)
    model = registry.build_model(config, splits.model_kwargs)
    if config.channels_last and entry.task == "image":
        model = model.to(memory_format=torch.channels_last)
    model = ray.train.torch.prepare_model(model)
    if config.compile:
        model = torch.compile(model)
    optimizer = optim.build_optimizer(config, model.parameters())
    world = ray.train.get_context().get_world_size()
    check_steps(train_size, config, world)  # a real data set's size is known only here
    steps_per_epoch = optimizer_steps(train_size, config, world)
    scheduler = optim.build_scheduler(config, optimizer, steps_per_epoch)
    return Run(
        config=config,
        model=model,
        optimizer=optimizer,
        scheduler=scheduler,
        splits=splits,
        train_batches=epoch_batches(splits, config, train=True),
        validation_batches=epoch_batches(splits, config, train=False),
        steps_per_epoch=steps_per_epoch,
        device=ray.train.torch.get_device(),
    )


def train_epoch(run: Run, epoch: int) -> dict[str, float]:
    config, model = run.config, run.model
    model.train()
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=config.label_smoothing)
    total_loss = torch.zeros((), device=run.device)
    samples = 0
    run.optimizer.zero_grad(set_to_none=True)  # drops a partial accumulation of last epoch
    start = time.perf_counter()
    for index, (inputs, labels) in enumerate(run.train_batches(epoch), start=1):
        inputs, labels = to_device(inputs, run.device, config), labels.to(run.device)
        if run.splits.train_transform is not None:
            inputs = run.splits.train_transform(inputs)
        stepping = index % config.grad_accum_steps == 0
        with _no_sync_unless(model, stepping):
            with _autocast(run.device, config):
                loss = loss_fn(logits_of(model, inputs), labels)
            (loss / config.grad_accum_steps).backward()
        if stepping:
            run.optimizer.step()
            run.optimizer.zero_grad(set_to_none=True)
            run.scheduler.step()
        total_loss += loss.detach() * labels.shape[0]
        samples += labels.shape[0]
    if run.device.type == "cuda":
        torch.cuda.synchronize(run.device)
    seconds = time.perf_counter() - start
    loss_sum, sample_sum = _all_reduce([total_loss.item(), float(samples)], run.device)
    return {
        metrics.TRAIN_LOSS: loss_sum / max(1.0, sample_sum),
        metrics.SAMPLES_PER_SECOND: sample_sum / max(seconds, 1e-9),
    }


def evaluate(run: Run) -> dict[str, float]:
    model = _validation_model(run.model)
    totals = validation_totals(model, run.validation_batches(0), run.device, run.config)
    loss, hits, total = _all_reduce(totals, run.device)
    return {
        metrics.VALIDATION_LOSS: loss / max(1.0, total),
        metrics.VALIDATION_ACCURACY: hits / max(1.0, total),
    }


@torch.no_grad()
def validation_totals(
    model: torch.nn.Module,
    batches: Iterable[tuple[Any, torch.Tensor]],
    device: torch.device,
    config: SupervisedConfig,
) -> list[float]:
    """Summed cross-entropy, correct predictions and examples over `batches` (this
    process's share; `rlsuite.evaluate` calls it on a whole split)."""
    model.eval()
    loss_sum = torch.zeros((), device=device)
    correct = torch.zeros((), device=device)
    count = 0
    for inputs, labels in batches:
        inputs, labels = to_device(inputs, device, config), labels.to(device)
        with _autocast(device, config):
            logits = logits_of(model, inputs).float()
        loss_sum += torch.nn.functional.cross_entropy(logits, labels, reduction="sum")
        correct += (logits.argmax(dim=1) == labels).sum()
        count += labels.shape[0]
    return [loss_sum.item(), correct.item(), float(count)]


def _validation_model(model: torch.nn.Module) -> torch.nn.Module:
    """The bare module, with rank 0's buffers (BatchNorm's statistics, which the checkpoint
    keeps) on every rank. Through DDP the first validation forward pass would broadcast
    them itself, a collective that hangs the other ranks where one rank's share of the
    validation split is empty: the shares are uneven so that each example counts once."""
    inner = getattr(model, "_orig_mod", model)  # under torch.compile
    if not isinstance(inner, DistributedDataParallel):
        return model
    module = inner.module
    for buffer in module.buffers():
        dist.broadcast(buffer, src=0)
    return module


def logits_of(model: torch.nn.Module, inputs: Any) -> torch.Tensor:
    """The model's logits for a Tensor or a dict of Tensors (transformers models)."""
    output = model(**inputs) if isinstance(inputs, dict) else model(inputs)
    return output if isinstance(output, torch.Tensor) else output.logits


def _report(result: dict[str, float], run: Run, epoch: int, *, checkpoint: bool) -> None:
    rank = ray.train.get_context().get_world_rank()
    with tempfile.TemporaryDirectory() as directory:
        saved = None
        if checkpoint and rank == 0:
            checkpoint_files.save(Path(directory), run, epoch)
            saved = ray.train.Checkpoint.from_directory(directory)
        ray.train.report(result, checkpoint=saved, checkpoint_dir_name=f"epoch_{epoch:06d}")


def _all_reduce(values: list[float], device: torch.device) -> list[float]:
    """Sums over all workers (values of this worker alone without a process group)."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return values
    tensor = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(tensor)
    return tensor.tolist()


def _autocast(device: torch.device, config: SupervisedConfig) -> contextlib.AbstractContextManager:
    enabled = device.type == "cuda" and config.precision == "bf16"
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=enabled)


def _no_sync_unless(model: torch.nn.Module, stepping: bool) -> contextlib.AbstractContextManager:
    """DDP all-reduces gradients on every backward; between optimizer steps of gradient
    accumulation that traffic is wasted, so skip it until the last micro-batch."""
    inner = getattr(model, "_orig_mod", model)
    if not stepping and isinstance(inner, DistributedDataParallel):
        return inner.no_sync()
    return contextlib.nullcontext()
