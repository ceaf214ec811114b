"""The threat planes of rlsuite.multiagent.masking: on boards from real games they mark
exactly the squares where each player would complete four (the landing ones agree with the
scripted players' one-move lookahead), a mirrored board gets mirrored planes, and the
mirrored module with them plays a mirrored board with mirrored moves."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns

import envs
from rlsuite.multiagent.masking import (
    MirrorThreatPlanesMaskingTorchRLModule,
    ThreatPlanesMaskingTorchRLModule,
    masked_ppo_spec,
)
from rlsuite.multiagent.opponents import one_move_answers, random_move
from rlsuite.multiagent.threats import completing_squares
from tests.masking_helpers import board_batch, connect_four_module, plain_and_mirrored_logits


def _positions(games: int) -> list[dict]:
    """Every position of `games` random games, as the player to move sees it."""
    env = envs.make("classic/connect_four", {})
    rng = np.random.default_rng(0)
    seen = []
    try:
        for game in range(games):
            observations, _ = env.reset(seed=game)
            while observations:
                agent, observation = next(iter(observations.items()))
                seen.append(observation)
                observations, _, done, *_ = env.step({agent: random_move(observation, rng)})
                if done["__all__"]:
                    break
    finally:
        env.close()
    return seen


@pytest.fixture(scope="module")
def positions() -> list[dict]:
    return _positions(40)


def _stacked(observations: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """The observations' boards and masks as batches."""
    boards = np.stack([np.asarray(o["observations"], np.float32) for o in observations])
    masks = np.stack([np.asarray(o["action_mask"], np.float32) for o in observations])
    return boards, masks


def _planes(observations: list[dict]) -> np.ndarray:
    module = connect_four_module(threat_planes=True)
    boards, masks = _stacked(observations)
    seen = module._preprocess_batch(board_batch(boards, masks))[1][Columns.OBS].numpy()
    np.testing.assert_array_equal(seen[..., :2], boards)
    return seen[..., 2:]


def test_the_landing_squares_that_complete_four_are_the_lookahead_answers(positions) -> None:
    planes = _planes(positions)
    landing = planes[..., 0]
    with_a_threat = 0
    for observation, (land, mine, theirs) in zip(
        positions, planes.transpose(0, 3, 1, 2), strict=True
    ):
        wins, blocks = one_move_answers(observation)
        assert np.flatnonzero((land * mine).max(axis=0)).tolist() == sorted(wins)
        assert np.flatnonzero((land * theirs).max(axis=0)).tolist() == sorted(blocks)
        with_a_threat += bool(wins or blocks)
    assert with_a_threat > 50  # the check saw many positions with something to find
    assert (landing.sum(axis=(1, 2)) == [o["action_mask"].sum() for o in positions]).all()


def test_a_line_with_a_gap_marks_the_gap_wherever_it_is() -> None:
    pieces = torch.zeros(1, 6, 7)
    pieces[0, 5, [0, 1, 3]] = 1.0  # bottom row: X X . X
    pieces[0, [1, 2, 3], [6, 5, 4]] = 1.0  # an anti-diagonal of three, its ends open
    empty = 1.0 - pieces
    expected = torch.zeros(1, 6, 7)
    expected[0, 5, 2] = 1.0
    expected[0, 4, 3] = 1.0  # the anti-diagonal's lower end; its upper end is off the board
    torch.testing.assert_close(completing_squares(pieces, empty), expected)
    occupied_gap = empty.clone()
    occupied_gap[0, 5, 2] = 0.0  # the opponent's piece in the gap: no four there
    assert completing_squares(pieces, occupied_gap)[0, 5, 2] == 0.0


def test_mirrored_boards_get_mirrored_planes(positions) -> None:
    mirrored = [
        {
            "observations": np.asarray(o["observations"])[:, ::-1],
            "action_mask": np.asarray(o["action_mask"])[::-1],
        }
        for o in positions
    ]
    np.testing.assert_array_equal(_planes(mirrored), _planes(positions)[:, :, ::-1])


def test_the_mirrored_module_reads_five_planes_and_plays_a_mirror_alike(positions) -> None:
    module = connect_four_module(threat_planes=True, mirror=True)
    assert isinstance(module, MirrorThreatPlanesMaskingTorchRLModule)
    first_conv = next(m for m in module.modules() if isinstance(m, torch.nn.Conv2d))
    assert first_conv.in_channels == 5
    assert module.observation_space["observations"].shape == (6, 7, 2)
    boards, masks = _stacked(positions[:32])
    logits, mirrored = plain_and_mirrored_logits(module, boards, masks)
    np.testing.assert_allclose(mirrored, logits[:, ::-1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(6, 7, 3), (3, 3, 2)])
def test_a_board_the_planes_do_not_fit_is_refused_in_one_line(shape) -> None:
    spec = masked_ppo_spec(threat_planes=True)
    spec.observation_space = gym.spaces.Dict(
        {
            "observations": gym.spaces.Box(0.0, 1.0, shape),
            "action_mask": gym.spaces.Box(0.0, 1.0, (shape[1],)),
        }
    )
    spec.action_space = gym.spaces.Discrete(shape[1])
    with pytest.raises(
        ValueError, match=f"board of two planes .* got shape {re.escape(str(shape))}"
    ):
        spec.build()


def test_plain_threat_planes_and_the_refused_combinations() -> None:
    assert masked_ppo_spec(threat_planes=True).module_class is ThreatPlanesMaskingTorchRLModule
    with pytest.raises(ValueError, match="mirror=True goes with threat_planes or no planes"):
        masked_ppo_spec(landing_plane=True, mirror=True)
    with pytest.raises(ValueError, match="not landing_plane and threat_planes"):
        masked_ppo_spec(landing_plane=True, threat_planes=True)
