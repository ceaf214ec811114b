"""The ones plane of rlsuite.multiagent.masking: the network sees the board's planes and a
plane of ones, masks still decide the legal moves, and the value and training passes see
the same input as acting does."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite.multiagent.masking import (
    ActionMaskingTorchRLModule,
    OnesPlaneMaskingTorchRLModule,
    masked_ppo_spec,
)
from tests.masking_helpers import BOARD_CNN, board_batch, connect_four_module, random_boards


@pytest.fixture(scope="module")
def module() -> OnesPlaneMaskingTorchRLModule:
    built = connect_four_module(ones_plane=True)
    assert isinstance(built, OnesPlaneMaskingTorchRLModule)
    return built


def _boards(n: int) -> tuple[np.ndarray, np.ndarray]:
    return random_boards(n, full_column=3, density=0.2)  # a full centre column


def test_the_plane_is_an_option() -> None:
    assert masked_ppo_spec().module_class is ActionMaskingTorchRLModule
    with pytest.raises(ValueError, match="board of shape"):
        OnesPlaneMaskingTorchRLModule(
            observation_space=gym.spaces.Box(0.0, 1.0, (6, 7, 2)),
            action_space=gym.spaces.Discrete(7),
            model_config=BOARD_CNN,
        )


def test_the_network_reads_three_planes(module: OnesPlaneMaskingTorchRLModule) -> None:
    first_conv = next(m for m in module.modules() if isinstance(m, torch.nn.Conv2d))
    assert first_conv.in_channels == 3


def test_the_added_plane_is_ones_after_the_board(
    module: OnesPlaneMaskingTorchRLModule,
) -> None:
    boards, masks = _boards(4)
    mask, batch = module._preprocess_batch(board_batch(boards, masks))
    seen = batch[Columns.OBS].numpy()
    assert seen.shape == (4, 6, 7, 3)
    np.testing.assert_array_equal(seen[..., :2], boards)
    np.testing.assert_array_equal(seen[..., 2], np.ones((4, 6, 7)))
    np.testing.assert_array_equal(mask.numpy(), masks)


def test_illegal_moves_get_no_probability(module: OnesPlaneMaskingTorchRLModule) -> None:
    boards, masks = _boards(5)
    with torch.no_grad():
        for forward in (module.forward_inference, module.forward_exploration):
            logits = forward(board_batch(boards, masks))[Columns.ACTION_DIST_INPUTS]
            probabilities = torch.softmax(logits, dim=-1).numpy()
            assert probabilities[:, 3].max() < 1e-6
            np.testing.assert_allclose(probabilities.sum(axis=-1), 1.0, rtol=1e-5)


def test_training_sees_what_acting_sees(module: OnesPlaneMaskingTorchRLModule) -> None:
    # PPO's learner computes values on the batch first (which unpacks the observation in
    # place), then runs the training pass on that same batch.
    boards, masks = _boards(3)
    with torch.no_grad():
        acting = module.forward_inference(board_batch(boards, masks))[Columns.ACTION_DIST_INPUTS]
        batch = board_batch(boards, masks)
        values = module.compute_values(batch)
        training = module.forward_train(batch)[Columns.ACTION_DIST_INPUTS]
    assert values.shape == (3,)
    torch.testing.assert_close(training, acting)


def test_a_copy_of_the_module_takes_its_weights(module: OnesPlaneMaskingTorchRLModule) -> None:
    # Self-play freezes snapshots this way (rlsuite.multiagent.selfplay._add_snapshot).
    assert module.observation_space["observations"].shape == (6, 7, 2)
    copy = RLModuleSpec.from_module(module).build()
    copy.set_state(module.get_state())
    boards, masks = _boards(2)
    with torch.no_grad():
        ours = module.forward_inference(board_batch(boards, masks))[Columns.ACTION_DIST_INPUTS]
        theirs = copy.forward_inference(board_batch(boards, masks))[Columns.ACTION_DIST_INPUTS]
    torch.testing.assert_close(theirs, ours)
