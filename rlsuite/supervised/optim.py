"""Optimizer and learning-rate schedule of the supervised loop, and the PBT check.

The schedule is one `torch.optim.lr_scheduler.LambdaLR` stepped per optimizer step with a
closed-form factor (warm-up, then constant, cosine or linear decay). One closed form,
rather than chaining LinearLR and CosineAnnealingLR in a SequentialLR, because after a PBT
exploit the peak learning rate changes: with LambdaLR that is one `base_lrs` edit, and the
learning rate in effect can be recomputed from the config and compared with the
optimizer's (`check_follows_config`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch.optim.lr_scheduler import LambdaLR

from rlsuite.supervised.config import SupervisedConfig

WARMUP_START = 0.01
"""Warm-up starts at this fraction of the peak learning rate."""


def build_optimizer(
    config: SupervisedConfig, parameters: Iterable[torch.nn.Parameter]
) -> torch.optim.Optimizer:
    if config.optimizer == "adamw":
        return torch.optim.AdamW(
            parameters,
            lr=config.lr,
            betas=(config.momentum, 0.999),
            weight_decay=config.weight_decay,
        )
    return torch.optim.SGD(
        parameters, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay
    )


def lr_factor(config: SupervisedConfig, step: int, steps_per_epoch: int) -> float:
    """Fraction of the peak learning rate after `step` optimizer steps."""
    epoch = step / max(1, steps_per_epoch)
    if epoch < config.warmup_epochs:
        return WARMUP_START + (1 - WARMUP_START) * epoch / config.warmup_epochs
    decay_epochs = config.epochs - config.warmup_epochs
    progress = min(1.0, (epoch - config.warmup_epochs) / decay_epochs) if decay_epochs > 0 else 1.0
    if config.lr_schedule == "cosine":
        return 0.5 * (1 + math.cos(math.pi * progress))
    if config.lr_schedule == "linear":
        return 1.0 - progress
    return 1.0


def build_scheduler(
    config: SupervisedConfig, optimizer: torch.optim.Optimizer, steps_per_epoch: int
) -> LambdaLR:
    # A plain function (not a callable object): LambdaLR then leaves it out of its
    # state_dict, so a restored scheduler follows the new trial's config, not the donor's.
    def factor(step: int) -> float:
        return lr_factor(config, step, steps_per_epoch)

    return LambdaLR(optimizer, factor)


def apply_config(
    config: SupervisedConfig, optimizer: torch.optim.Optimizer, scheduler: LambdaLR
) -> None:
    """Make the config's lr, momentum and weight decay the ones in effect after a restore.

    `load_state_dict` brings back the checkpoint's values: after a PBT exploit those are the
    donor trial's, not this trial's perturbed ones (the bug RLlib had, ray issue 62173).
    """
    scheduler.base_lrs = [config.lr] * len(optimizer.param_groups)
    factor = scheduler.lr_lambdas[0](scheduler.last_epoch)
    for group in optimizer.param_groups:
        group["lr"] = config.lr * factor
        group["initial_lr"] = config.lr
        group["weight_decay"] = config.weight_decay
        if "betas" in group:
            group["betas"] = (config.momentum, group["betas"][1])
        else:
            group["momentum"] = config.momentum
    scheduler._last_lr = [group["lr"] for group in optimizer.param_groups]  # get_last_lr()


def in_effect(group: dict) -> dict[str, float]:
    """lr, momentum and weight decay one parameter group of an optimizer steps with."""
    momentum = group["betas"][0] if "betas" in group else group["momentum"]
    return {
        "lr": float(group["lr"]),
        "momentum": float(momentum),
        "weight_decay": float(group["weight_decay"]),
    }


def check_follows_config(
    config: SupervisedConfig,
    optimizer: torch.optim.Optimizer,
    step: int,
    steps_per_epoch: int,
) -> None:
    """Raise PerturbationIgnoredError unless every parameter group uses the config's values
    (the learning rate as the schedule gives it after `step` steps)."""
    expected = {
        "lr": config.lr * lr_factor(config, step, steps_per_epoch),
        "momentum": config.momentum,
        "weight_decay": config.weight_decay,
    }
    wrong = []
    for group in optimizer.param_groups:
        actual = in_effect(group)
        for key, value in expected.items():
            if not math.isclose(actual[key], value, rel_tol=1e-6, abs_tol=1e-12):
                wrong.append(f"{key}={actual[key]:g} (config {value:g})")
    if wrong:
        # The RL check's error, imported here: rlsuite.pbt imports RLlib, which Train
        # workers need not load.
        from rlsuite.errors import PerturbationIgnoredError

        raise PerturbationIgnoredError(
            "the optimizer trains with other values than the trial's config: "
            + "; ".join(sorted(set(wrong)))
        )
