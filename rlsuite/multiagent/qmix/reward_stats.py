"""Running reward statistics for the TD targets: EPyMARL's `standardise_rewards`.

The learner trains on (r - mean) / std of the rewards it has replayed so far (EPyMARL's
`RunningMeanStd`, updated with each train batch, as its Q learner does). Why here and not
RLlib's `MeanStdFilter`: that filter works on observations in env-to-module connectors; the
one-step replay hands the learner ready batches with no connector in between, and the
statistics must follow the learner through checkpoints and restores. They are torch
buffers of the QMIX module (a non-inference part, as the mixer), so RLlib saves and
restores them with the module's weights; env runners never hold them.
"""

from __future__ import annotations

import torch
from torch import nn


class RunningRewardStats(nn.Module):
    """Mean and variance of every reward seen, merged batch by batch (Chan et al.'s
    parallel rule, as EPyMARL's and Gymnasium's RunningMeanStd)."""

    count: torch.Tensor
    mean: torch.Tensor
    var: torch.Tensor

    def __init__(self, epsilon: float = 1e-4) -> None:
        super().__init__()
        # EPyMARL starts the count at epsilon, so the first batch's moments dominate. Kept
        # in float32 (merged in float64): RLlib's checkpoints hand module state back so.
        self.register_buffer("count", torch.tensor(epsilon))
        self.register_buffer("mean", torch.zeros(()))
        self.register_buffer("var", torch.ones(()))

    @torch.no_grad()
    def update(self, rewards: torch.Tensor) -> None:
        values = rewards.detach().to(torch.float64).flatten()
        n = values.numel()
        if n == 0:
            return
        batch_mean, batch_var = values.mean(), values.var(unbiased=False)
        count, mean, var = (x.to(torch.float64) for x in (self.count, self.mean, self.var))
        total = count + n
        delta = batch_mean - mean
        m2 = var * count + batch_var * n + delta**2 * count * n / total
        self.mean.copy_(mean + delta * n / total)
        self.var.copy_(m2 / total)
        self.count.copy_(total)

    def standardize(self, rewards: torch.Tensor) -> torch.Tensor:
        return (rewards - self.mean) / torch.sqrt(self.var + 1e-8)
