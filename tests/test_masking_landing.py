"""The landing plane of rlsuite.multiagent.masking: on boards reached by real connect four
moves it marks exactly the squares the next piece in each column lands on, and the network
reads it while the module's space stays the env's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

import envs
from rlsuite.multiagent.masking import LandingPlaneMaskingTorchRLModule, masked_ppo_spec
from tests.masking_helpers import connect_four_module

# Column 3 filled to the top, column 0 three high, column 6 once: the rest empty.
MOVES = [3, 3, 3, 3, 3, 3, 0, 0, 0, 6]


def _played_board() -> np.ndarray:
    env = envs.make("classic/connect_four", {})
    try:
        observations, _ = env.reset(seed=0)
        for action in MOVES:
            observations, *_ = env.step({next(iter(observations)): action})
        return np.asarray(next(iter(observations.values()))["observations"], np.float32)
    finally:
        env.close()


@pytest.fixture(scope="module")
def module() -> LandingPlaneMaskingTorchRLModule:
    built = connect_four_module(landing_plane=True)
    assert isinstance(built, LandingPlaneMaskingTorchRLModule)
    return built


def _seen(module: LandingPlaneMaskingTorchRLModule, boards: np.ndarray) -> np.ndarray:
    batch = {
        Columns.OBS: {
            "observations": torch.as_tensor(boards),
            "action_mask": torch.ones((len(boards), 7)),
        }
    }
    return module._preprocess_batch(batch)[1][Columns.OBS].numpy()


def test_the_plane_marks_where_each_column_lands(module) -> None:
    board = _played_board()
    assert board.sum() == len(MOVES)
    seen = _seen(module, np.stack([board, np.zeros_like(board)]))
    expected = np.zeros((6, 7), np.float32)
    expected[5, [1, 2, 4, 5]] = 1.0  # empty columns: the bottom row
    expected[2, 0] = 1.0  # three pieces in column 0: the fourth square from the bottom
    expected[4, 6] = 1.0  # one piece in column 6
    # column 3 is full: no square
    np.testing.assert_array_equal(seen[0, ..., 2], expected)
    np.testing.assert_array_equal(seen[0, ..., :2], board)
    np.testing.assert_array_equal(seen[1, ..., 2], _bottom())  # an empty board


def _bottom() -> np.ndarray:
    bottom = np.zeros((6, 7), np.float32)
    bottom[5] = 1.0
    return bottom


def test_the_network_reads_it_and_a_copy_adds_it_once(module) -> None:
    first_conv = next(m for m in module.modules() if isinstance(m, torch.nn.Conv2d))
    assert first_conv.in_channels == 3
    assert module.observation_space["observations"].shape == (6, 7, 2)
    copy = RLModuleSpec.from_module(module).build()
    copy.set_state(module.get_state())
    boards = np.stack([_played_board()] * 2)
    batch = {"observations": torch.as_tensor(boards), "action_mask": torch.ones((2, 7))}
    with torch.no_grad():
        ours = module.forward_inference({Columns.OBS: dict(batch)})
        theirs = copy.forward_inference({Columns.OBS: dict(batch)})
    torch.testing.assert_close(theirs[Columns.ACTION_DIST_INPUTS], ours[Columns.ACTION_DIST_INPUTS])


def test_one_extra_plane_at_a_time() -> None:
    with pytest.raises(
        ValueError,
        match="one of ones_plane, landing_plane, threat_planes, not ones_plane and landing_plane",
    ):
        masked_ppo_spec(ones_plane=True, landing_plane=True)
