"""Batches for the Train loop: a DataLoader over a torch Dataset (sharded by Ray Train's
DistributedSampler) or a Ray Data shard's `iter_torch_batches`, both as (inputs, labels)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import Any, cast

import ray.train
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler, Sampler

from rlsuite.errors import UsageError
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.registry import Splits

EpochBatches = Callable[[int], Iterable[tuple[Any, torch.Tensor]]]
"""epoch -> that epoch's batches."""

# Rows Ray Data shuffles among in each worker (a full random shuffle of an ImageNet-size
# set would move every image between nodes each epoch).
LOCAL_SHUFFLE_ROWS = 4096


def epoch_batches(splits: Splits, config: SupervisedConfig, *, train: bool) -> EpochBatches:
    data = splits.train if train else splits.validation
    if isinstance(data, Dataset):
        return _loader_batches(data, splits, config, train)
    return _ray_data_batches(data, splits, config, train)


def _loader_batches(
    data: Dataset, splits: Splits, config: SupervisedConfig, train: bool
) -> EpochBatches:
    cuda = torch.cuda.is_available() and config.use_gpu
    context = ray.train.get_context()
    world = context.get_world_size()
    # Our own sampler, one worker or many: Ray's would shuffle with seed 0 in every trial
    # (`--seeds` runs would see one data order), and a one-worker DataLoader shuffles from
    # the global RNG, so a resumed run would replay the first epochs' orders. Seeded by the
    # trial's seed and the epoch, the order is the same with or without a resume.
    size, rank = len(cast(Sized, data)), context.get_world_rank()
    # Validation: each example on one worker, the shares uneven (even empty: validation
    # runs outside DDP, loop._validation_model), where torch's sampler pads them to one length.
    sampler: Sampler[int] = (
        DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=config.seed)
        if train
        else ValidationShard(size, world, rank)
    )
    # Each worker's share, as the sampler hands it out: the whole split's size would keep a
    # last short batch of a rank that holds less than one batch.
    rows = math.ceil(size / world)
    loader = DataLoader(
        data,
        batch_size=config.per_worker_batch_size,
        sampler=sampler,
        num_workers=config.loader_workers,
        collate_fn=splits.collate_fn,
        pin_memory=cuda,
        drop_last=drops_last(rows, config, train=train),
        persistent_workers=config.loader_workers > 0,
    )

    def batches(epoch: int) -> Iterable[tuple[Any, torch.Tensor]]:
        if isinstance(sampler, DistributedSampler):
            sampler.set_epoch(epoch)  # a new shuffle each epoch
        return loader

    return batches


class ValidationShard(Sampler[int]):
    """One worker's share of a validation split: every `world`-th example from `rank` on,
    each example on exactly one worker. torch's DistributedSampler pads the shares to one
    length by repeating examples, which the summed validation totals would count twice;
    here the shares differ by at most one example, and a worker may have none (validation
    runs no collective per batch: `loop._validation_model`)."""

    def __init__(self, size: int, world: int, rank: int) -> None:
        self.indices = range(rank, size, world)

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices)

    def __len__(self) -> int:
        return len(self.indices)


def _ray_data_batches(
    shard: Any, splits: Splits, config: SupervisedConfig, train: bool
) -> EpochBatches:
    shard_rows = (splits.train_size or 0) // ray.train.get_context().get_world_size()

    def batches(epoch: int) -> Iterable[tuple[Any, torch.Tensor]]:
        return shard.iter_torch_batches(
            batch_size=config.per_worker_batch_size,
            collate_fn=splits.collate_fn,
            drop_last=drops_last(shard_rows, config, train=train),
            local_shuffle_buffer_size=LOCAL_SHUFFLE_ROWS if train else None,
            local_shuffle_seed=config.seed + epoch if train else None,
        )

    return batches


def drops_last(rows: int, config: SupervisedConfig, *, train: bool) -> bool:
    """Training drops a last short batch (a batch of one breaks BatchNorm on 1x1 maps)
    unless the split is smaller than one batch; validation sees every example, each on
    exactly one worker (a torch data set's through `ValidationShard`, a Ray Data set's
    through `validation_split.ExactValidation`)."""
    return train and rows >= config.per_worker_batch_size


def optimizer_steps(train_rows: int, config: SupervisedConfig, workers: int) -> int:
    """Optimizer steps an epoch makes on each of `workers` workers (0: none at all)."""
    config = config.replace(num_workers=workers)
    rows, size = math.ceil(train_rows / workers), config.per_worker_batch_size
    batches = rows // size if drops_last(rows, config, train=True) else math.ceil(rows / size)
    return batches // config.grad_accum_steps


def check_steps(train_rows: int, config: SupervisedConfig, workers: int) -> None:
    """An epoch without an optimizer step would train nothing, without an error."""
    if optimizer_steps(train_rows, config, workers) == 0:
        raise UsageError(
            f"grad_accum_steps {config.grad_accum_steps} is more than the batches an epoch "
            f"has on each worker ({train_rows} training examples over {workers} worker(s) "
            f"in batches of {config.replace(num_workers=workers).per_worker_batch_size}), so "
            "the optimizer would "
            "never step; lower grad_accum_steps or batch_size"
        )


def to_device(inputs: Any, device: torch.device, config: SupervisedConfig) -> Any:
    """Inputs on the worker's device; image batches in channels-last layout if asked."""
    if isinstance(inputs, dict):
        return {key: to_device(value, device, config) for key, value in inputs.items()}
    inputs = inputs.to(device, non_blocking=True)
    if config.channels_last and inputs.dim() == 4:
        inputs = inputs.contiguous(memory_format=torch.channels_last)
    return inputs
