"""The landing-square policy head of rlsuite.multiagent.landing_head: each column's logit is
the score of the square a piece dropped there lands on, every square scored by the same
per-square network over RLlib's CNN features; mirrored, it plays a mirrored board with
mirrored moves; CNNs that do not keep one feature per square are refused in one line."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.models.base import ACTOR, ENCODER_OUT
from ray.rllib.core.models.torch.primitives import TorchCNN
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite.multiagent.masking import (
    LandingHeadThreatPlanesMaskingTorchRLModule,
    MirrorLandingHeadThreatPlanesMaskingTorchRLModule,
    masked_ppo_spec,
)
from tests.masking_helpers import (
    board_batch,
    connect_four_module,
    plain_and_mirrored_logits,
    random_boards,
)


def _stacked_boards(n: int, full_column: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` boards whose pieces lie on the floor or on each other, as pieces dropped do, and
    their masks; `full_column` is full."""
    rng = np.random.default_rng(0)
    heights = rng.integers(0, 6, size=(n, 7))
    heights[:, full_column] = 6
    boards = np.zeros((n, 6, 7, 2), np.float32)
    for b, column in np.ndindex(n, 7):
        for row in range(6 - heights[b, column], 6):
            boards[b, row, column, rng.integers(2)] = 1.0
    masks = (heights < 6).astype(np.float32)
    return boards, masks


def _lowest_empty_row(occupied: np.ndarray, column: int) -> int | None:
    empty_rows = np.flatnonzero(occupied[:, column] == 0)
    return int(empty_rows.max()) if empty_rows.size else None


def test_rllibs_cnn_encoder_flattens_a_channels_last_map_per_square() -> None:
    # the head reads the flat embedding back as (rows, columns, channels)
    module = connect_four_module(threat_planes=True, landing_head=True)
    boards, masks = random_boards(16, full_column=2, density=0.3)
    _, batch = module._preprocess_batch(board_batch(boards, masks))
    cnn = next(m for m in module.modules() if isinstance(m, TorchCNN))
    with torch.no_grad():
        flat = module.encoder(batch)[ENCODER_OUT][ACTOR]
        per_square = cnn(batch[Columns.OBS])
    assert per_square.shape[:3] == (16, 6, 7)
    torch.testing.assert_close(flat, per_square.reshape(16, -1))


def test_each_column_plays_the_score_of_its_landing_square() -> None:
    module = connect_four_module(threat_planes=True, landing_head=True)
    # the head's own net: 1x1 convolutions, as wide as head_fcnet_hiddens ([16])
    convs = [m for m in module.pi.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in convs] == [
        (8, 16, (1, 1)),
        (16, 1, (1, 1)),
    ]
    assert isinstance(module.pi[1], torch.nn.ReLU)  # head_fcnet_activation's default
    boards, masks = _stacked_boards(16, full_column=2)
    _, batch = module._preprocess_batch(board_batch(boards, masks))
    with torch.no_grad():
        features = module.encoder(batch)[ENCODER_OUT][ACTOR].view(16, 6, 7, 8)
        scores = module.pi(features.permute(0, 3, 1, 2)).squeeze(1).numpy()
        logits = module.forward_inference(board_batch(boards, masks))
    logits = logits[Columns.ACTION_DIST_INPUTS].numpy()
    occupied = boards.sum(axis=-1).clip(max=1.0)
    for b in range(16):
        for column in range(7):
            row = _lowest_empty_row(occupied[b], column)
            if row is None:
                assert column == 2 and logits[b, column] < -1e30  # full: masked
            else:
                assert logits[b, column] == pytest.approx(scores[b, row, column], abs=1e-5)


def test_the_mirrored_head_plays_a_mirror_alike_and_a_snapshot_copy_too() -> None:
    module = connect_four_module(threat_planes=True, mirror=True, landing_head=True)
    assert isinstance(module, MirrorLandingHeadThreatPlanesMaskingTorchRLModule)
    boards, masks = random_boards(32, full_column=5, density=0.3)
    logits, mirrored = plain_and_mirrored_logits(module, boards, masks)
    assert np.all(logits[:, 5] < -1e30)
    np.testing.assert_allclose(mirrored, logits[:, ::-1], rtol=1e-5, atol=1e-5)


def test_training_forward_gives_logits_per_column_and_values_per_board() -> None:
    module = connect_four_module(threat_planes=True, landing_head=True)
    assert isinstance(module, LandingHeadThreatPlanesMaskingTorchRLModule)
    boards, masks = random_boards(8, full_column=0, density=0.3)
    batch = board_batch(boards, masks)
    values = module.compute_values(batch)  # as PPO's GAE connector calls it first
    output = module.forward_train(batch)
    assert values.shape == (8,)
    assert output[Columns.ACTION_DIST_INPUTS].shape == (8, 7)
    output[Columns.ACTION_DIST_INPUTS][:, 1:].sum().backward()
    assert all(p.grad is not None for p in module.pi.parameters())


def _build(conv_filters: list, actions: int = 7) -> None:
    spec = masked_ppo_spec(
        DefaultModelConfig(conv_filters=conv_filters, head_fcnet_hiddens=[16]),
        threat_planes=True,
        landing_head=True,
    )
    spec.observation_space = gym.spaces.Dict(
        {
            "observations": gym.spaces.Box(0.0, 1.0, (6, 7, 2)),
            "action_mask": gym.spaces.Box(0.0, 1.0, (7,)),
        }
    )
    spec.action_space = gym.spaces.Discrete(actions)
    spec.build()


@pytest.mark.parametrize("conv_filters", [[[8, [4, 4], 2]], [[8, [4, 4], 1, "valid"]], []], ids=str)
def test_a_cnn_without_one_feature_per_square_is_refused_in_one_line(conv_filters) -> None:
    with pytest.raises(ValueError, match="needs conv_filters of stride 1 with 'same' padding"):
        _build(conv_filters)


def test_a_move_set_other_than_the_columns_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"needs one action per column of the board \(6, 7, 5\)"):
        _build([[8, [4, 4], 1]], actions=6)


def test_the_landing_head_goes_with_the_threat_planes() -> None:
    with pytest.raises(ValueError, match="landing_head=True goes with threat_planes=True"):
        masked_ppo_spec(landing_head=True)
    with pytest.raises(ValueError, match="landing_head=True goes with threat_planes=True"):
        masked_ppo_spec(landing_plane=True, landing_head=True)
