"""Small connect-four RLModules of rlsuite.multiagent.masking and board batches for them."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

import envs
from rlsuite.multiagent.masking import masked_ppo_spec

BOARD_CNN = DefaultModelConfig(conv_filters=[[8, [4, 4], 1]], head_fcnet_hiddens=[16])


def connect_four_module(**options: bool) -> Any:
    """`masked_ppo_spec(BOARD_CNN, **options)` built for connect four's spaces."""
    env = envs.make("classic/connect_four", {})
    try:
        spec = masked_ppo_spec(BOARD_CNN, **options)
        spec.observation_space = env.observation_spaces["player_0"]
        spec.action_space = env.action_spaces["player_0"]
        return spec.build()
    finally:
        env.close()


def board_batch(boards: np.ndarray, masks: np.ndarray) -> dict:
    return {
        Columns.OBS: {
            "observations": torch.as_tensor(boards, dtype=torch.float32),
            "action_mask": torch.as_tensor(masks, dtype=torch.float32),
        }
    }


def random_boards(n: int, full_column: int, density: float) -> tuple[np.ndarray, np.ndarray]:
    """`n` random 6x7x2 boards and masks in which `full_column` is full."""
    rng = np.random.default_rng(0)
    boards = (rng.random((n, 6, 7, 2)) < density).astype(np.float32)
    masks = np.ones((n, 7), np.float32)
    masks[:, full_column] = 0.0
    return boards, masks


def plain_and_mirrored_logits(
    module: Any, boards: np.ndarray, masks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`module`'s move logits on the boards, and those of a copy of it built as a self-play
    snapshot is (`RLModuleSpec.from_module`) on the mirrored boards."""
    copy = RLModuleSpec.from_module(module).build()
    copy.set_state(module.get_state())
    with torch.no_grad():
        plain = module.forward_inference(board_batch(boards, masks))
        mirrored = copy.forward_inference(
            board_batch(boards[:, :, ::-1].copy(), masks[:, ::-1].copy())
        )
    return (
        plain[Columns.ACTION_DIST_INPUTS].numpy(),
        mirrored[Columns.ACTION_DIST_INPUTS].numpy(),
    )
