"""bf16 autocast for RLlib's torch Learners: `.learners(learner_class=Bf16PPOTorchLearner)`;
for another algorithm, `class Bf16DQNLearner(Bf16AutocastMixin, DQNTorchLearner): pass`.

RLlib's new API stack has no mixed precision for a Learner of its own (its grad scalers
are for fp16 on GPUs), and on a CPU the convolutions of an Atari CNN are where PPO's time
goes: a Learner update of `experiments/ppo_atari.py` took 34 s per 4k env steps in fp32
and 24 s under bf16 autocast on this machine's AVX512-BF16 CPU. The forward pass runs
under autocast; the losses see float32 outputs and the backward pass runs outside
autocast, as PyTorch's AMP recipe asks. The weights and the optimizer stay float32.

Where the Learner's device has no fast bf16 (a CPU without AVX512-BF16/AMX, an old GPU),
the Learner runs in float32: the choice is made on the Learner's own machine, which on a
cluster is not the driver's.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner


def fast_bf16(device: torch.device) -> bool:
    """Whether bf16 matmuls and convolutions run natively on `device`."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return device.type == "cpu" and bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


class Bf16AutocastMixin:
    """Put before a `TorchLearner` subclass in the bases."""

    def build(self) -> None:
        super().build()  # type: ignore[misc]
        device = torch.device(self._device)  # type: ignore[attr-defined]
        self.autocast_device = device.type
        self.bf16 = fast_bf16(device)

    def _uncompiled_update(self, batch: dict[str, Any], **kwargs: Any) -> Any:
        with torch.autocast(self.autocast_device, dtype=torch.bfloat16, enabled=self.bf16):
            return super()._uncompiled_update(batch, **kwargs)  # type: ignore[misc]

    def compute_losses(self, *, fwd_out: dict[str, Any], batch: dict[str, Any]) -> Any:
        return super().compute_losses(fwd_out=_to_float32(fwd_out), batch=batch)  # type: ignore[misc]

    def compute_gradients(self, loss_per_module: dict[str, Any], **kwargs: Any) -> Any:
        with torch.autocast(self.autocast_device, enabled=False):
            return super().compute_gradients(loss_per_module, **kwargs)  # type: ignore[misc]


class Bf16PPOTorchLearner(Bf16AutocastMixin, PPOTorchLearner):
    """RLlib's PPO Learner with its forward pass under bf16 autocast where that is fast."""


def _to_float32(tree: Any) -> Any:
    if isinstance(tree, torch.Tensor):
        return tree.float() if tree.dtype == torch.bfloat16 else tree
    if isinstance(tree, dict):
        return {key: _to_float32(value) for key, value in tree.items()}
    return tree
