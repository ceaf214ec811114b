"""`Run`: what one Ray Train worker trains with, shared by the loop and its checkpoints."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rlsuite.supervised import registry
from rlsuite.supervised.batches import EpochBatches
from rlsuite.supervised.config import SupervisedConfig


@dataclass
class Run:
    """What one worker trains with."""

    config: SupervisedConfig
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    splits: registry.Splits
    train_batches: EpochBatches
    validation_batches: EpochBatches
    steps_per_epoch: int
    device: torch.device
