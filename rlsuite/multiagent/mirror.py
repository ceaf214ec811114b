"""A masked PPO RLModule that plays a left-right symmetric board game symmetrically.

Connect four is the same game in a mirror: the mirrored move in the mirrored position is
as good. `MirrorMaskingTorchRLModule` builds that into the network, as group-equivariant
networks do (Cohen and Welling 2016), by averaging over the symmetry: each board goes
through RLlib's PPO networks twice, as it is and mirrored; the action logits are the
mean of the first and the second flipped back, the value the mean of both values. So
whatever it learns on one side of the board holds on the other, with no extra samples.
The cost: twice the network's work per step.

The mirroring sits under RLlib's masking module (in the method order), so the mask is
added to the averaged logits in the board's own column order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
    DefaultPPOTorchRLModule,
)
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite.multiagent.rllib_masking import ActionMaskingTorchRLModule


def _with_mirror(batch: dict[str, Any]) -> dict[str, Any]:
    """The batch's boards (batch, height, width, planes) followed by their mirror images."""
    board = batch[Columns.OBS]
    return {**batch, Columns.OBS: torch.cat([board, board.flip(-2)], dim=0)}


def _mean_of_halves(values: torch.Tensor, flip_second: bool = False) -> torch.Tensor:
    first, second = values.chunk(2, dim=0)
    return 0.5 * (first + (second.flip(-1) if flip_second else second))


class _MirroredPPOTorchRLModule(DefaultPPOTorchRLModule):
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        output = super()._forward(_with_mirror(batch), **kwargs)
        logits = output[Columns.ACTION_DIST_INPUTS]
        output[Columns.ACTION_DIST_INPUTS] = _mean_of_halves(logits, flip_second=True)
        return output

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        # The embeddings stay doubled: PPO's learner hands them back to compute_values.
        output = super()._forward_train(_with_mirror(batch), **kwargs)
        logits = output[Columns.ACTION_DIST_INPUTS]
        output[Columns.ACTION_DIST_INPUTS] = _mean_of_halves(logits, flip_second=True)
        return output

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            batch = _with_mirror(batch)
        # as_tensor returns the tensor itself (RLlib types it as any TensorType)
        values = torch.as_tensor(super().compute_values(batch, embeddings))
        return _mean_of_halves(values)


class MirrorMaskingTorchRLModule(ActionMaskingTorchRLModule, _MirroredPPOTorchRLModule):
    """RLlib's action-masking PPO module whose policy is mirror-equivariant and whose value
    is mirror-invariant for boards of shape (height, width, planes) mirrored in width, one
    action per column (action i is column i, as in connect four)."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        board = (
            observation_space.spaces.get("observations")
            if isinstance(observation_space, gym.spaces.Dict)
            else None
        )
        action_space = kwargs.get("action_space")
        if not (
            isinstance(board, gym.spaces.Box)
            and len(board.shape) == 3
            and isinstance(action_space, gym.spaces.Discrete)
            and action_space.n == board.shape[1]
        ):
            raise ValueError(
                f"{type(self).__name__} needs a Dict observation whose 'observations' is a "
                f"board (height, width, planes) and one action per column, got "
                f"{observation_space} and {action_space}"
            )
        super().__init__(observation_space=observation_space, **kwargs)

    def setup(self) -> None:
        # The boards are doubled, a recurrent state would have to be doubled with them.
        config = self.model_config
        if isinstance(config, DefaultModelConfig):
            config = dataclasses.asdict(config)
        if (config or {}).get("use_lstm"):
            raise ValueError(f"{type(self).__name__} takes no recurrent model (use_lstm)")
        super().setup()


__all__ = ["MirrorMaskingTorchRLModule"]
