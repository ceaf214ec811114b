"""A PPO policy head for connect four that scores squares, not columns.

RLlib's PPO module flattens the CNN's feature map and maps it to one logit per column with
a dense layer, so "play where the opponent would complete four" must be learned for every
square separately. A fully convolutional policy head, as AlphaGo's (Silver et al. 2016:
the policy network's last layer is a 1x1 convolution, one logit per point of the board),
scores every square with the same small network, so what it learns on one square holds
on all. The move in a column is the piece that lands there, so each column's logit is
its landing square's score. The value head stays RLlib's dense one.

It sits under RLlib's masking module and the mirroring in the method order: the mask is
added to these logits, and a mirrored board gets its own landing squares.
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
from ray.rllib.core.models.base import ACTOR, CRITIC, ENCODER_OUT
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.models.utils import get_activation_fn
from torch import nn

from rlsuite.multiagent.threats import landing_squares


def _model_config(config: Any) -> dict[str, Any]:
    if isinstance(config, DefaultModelConfig):
        return dataclasses.asdict(config)
    return dict(config or {})


class LandingHeadPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's module whose policy scores each square of the CNN's feature map with a
    per-square MLP (1x1 convolutions, `head_fcnet_hiddens` wide, `head_fcnet_activation`
    between them) and plays each column at its landing square. Needs a board (height,
    width, planes) whose first two planes hold the pieces, one action per column, and a
    CNN that keeps the board's size (stride 1, "same" padding). RLlib's catalog builds
    only dense policy heads, hence this one."""

    def setup(self) -> None:
        # checked before RLlib's catalog builds the encoder, which has its own (longer)
        # complaint about a board without conv_filters
        config = _model_config(self.model_config)
        filters = config.get("conv_filters")
        keeps_size = all(len(spec) < 4 or spec[3] == "same" for spec in filters or []) and all(
            spec[2] in (1, [1, 1], (1, 1)) for spec in filters or []
        )
        if not filters or not keeps_size or config.get("use_lstm"):
            raise ValueError(
                f"{type(self).__name__} needs conv_filters of stride 1 with 'same' padding "
                f"(one feature per square) and no use_lstm, got conv_filters={filters}"
            )
        space = self.observation_space  # the board, or a Dict of it and the action mask
        board: tuple[int, ...] = getattr(
            space["observations"] if isinstance(space, gym.spaces.Dict) else space, "shape", ()
        )
        if len(board) != 3 or getattr(self.action_space, "n", None) != board[1]:
            raise ValueError(
                f"{type(self).__name__} needs one action per column of the board {board}, "
                f"got {self.action_space}"
            )
        super().setup()
        channels = filters[-1][0]
        activation = get_activation_fn(config.get("head_fcnet_activation"), framework="torch")
        layers: list[nn.Module] = []
        for width in config.get("head_fcnet_hiddens") or []:
            layers.append(nn.Conv2d(channels, width, kernel_size=1))
            layers += [activation()] if activation else []
            channels = width
        layers.append(nn.Conv2d(channels, 1, kernel_size=1))
        self.pi = nn.Sequential(*layers)

    def _landing_logits(self, batch: dict[str, Any], features: torch.Tensor) -> torch.Tensor:
        board = batch[Columns.OBS]
        rows, columns = board.shape[1:3]
        # RLlib's CNN encoder flattens its channels-last feature map (batch, rows, columns, C)
        squares = features.view(board.shape[0], rows, columns, -1).permute(0, 3, 1, 2)
        scores = self.pi(squares).squeeze(1)
        landing = landing_squares(board[..., :2].sum(dim=-1).clamp(max=1.0))
        # a full column has no landing square: logit 0, and the mask takes it out
        return (scores * landing).sum(dim=-2)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        encoder_outs = self.encoder(batch)
        logits = self._landing_logits(batch, encoder_outs[ENCODER_OUT][ACTOR])
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        encoder_outs = self.encoder(batch)
        return {
            Columns.EMBEDDINGS: encoder_outs[ENCODER_OUT][CRITIC],
            Columns.ACTION_DIST_INPUTS: self._landing_logits(
                batch, encoder_outs[ENCODER_OUT][ACTOR]
            ),
        }


__all__ = ["LandingHeadPPOTorchRLModule"]
