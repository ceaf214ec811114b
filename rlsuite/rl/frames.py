"""RLModules that take uint8 image frames and scale them to [0, 1] on their own device.

Atari agents in CleanRL, Stable-Baselines3 and Dopamine keep frames as the uint8 ALE makes
and divide by 255 inside the network: episodes, the object store, the learner connector
and replay buffers then move a quarter of the bytes of float32 frames. The learner
connector that batches PPO's episodes was 67% of the learner's time at 14 env runners with
a GPU learner, on float32 frames (docs/performance.md). RLlib's default modules feed their
observation straight into the CNN, which refuses uint8; these subclasses scale first.

    config.environment("atari/pong", env_config={"frame_dtype": "uint8"})
    config.rl_module(rl_module_spec=RLModuleSpec(module_class=ScaledFramesPPOModule))

The scaling is a forward pre-hook on each of the module's CNN stacks, so the module's
weights, state dict and checkpoints are RLlib's own, target networks (deep copies) keep it,
and float frames pass through unchanged.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.appo.torch.default_appo_torch_rl_module import (
    DefaultAPPOTorchRLModule,
)
from ray.rllib.algorithms.dqn.torch.default_dqn_torch_rl_module import DefaultDQNTorchRLModule
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.models.torch.primitives import TorchCNN

_INV_255 = 1.0 / 255.0


def _scale_uint8(_module: torch.nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    (frames, *rest) = args
    if frames.dtype != torch.uint8:
        return None
    return (frames.to(torch.float32).mul_(_INV_255), *rest)


def scale_uint8_frames(module: torch.nn.Module) -> int:
    """Hook every CNN stack in `module` to scale uint8 input; returns how many it hooked."""
    stacks = [child for child in module.modules() if isinstance(child, TorchCNN)]
    for stack in stacks:
        stack.register_forward_pre_hook(_scale_uint8)
    return len(stacks)


class ScaledFramesMixin:
    """Put before an RLlib torch RLModule class in the bases."""

    def setup(self) -> None:
        super().setup()  # type: ignore[misc]
        scale_uint8_frames(self)  # type: ignore[arg-type]


class ScaledFramesPPOModule(ScaledFramesMixin, DefaultPPOTorchRLModule):
    """RLlib's PPO (and IMPALA) module on uint8 frames."""


class ScaledFramesAPPOModule(ScaledFramesMixin, DefaultAPPOTorchRLModule):
    """RLlib's APPO module on uint8 frames."""


class ScaledFramesDQNModule(ScaledFramesMixin, DefaultDQNTorchRLModule):
    """RLlib's DQN module on uint8 frames."""


def takes_uint8_frames(module_class: type) -> bool:
    """Whether a module class may be given uint8 frames: the suite's scaled modules and any
    user module, but not RLlib's own defaults, whose CNN refuses them."""
    if issubclass(module_class, ScaledFramesMixin):
        return True
    return not module_class.__module__.startswith("ray.rllib.")
