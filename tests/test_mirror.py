"""rlsuite.multiagent.mirror: the policy plays a mirrored board with mirrored moves, the
value does not change, masks still decide the legal moves, and training sees what acting
sees (PPO's learner hands the training pass's embeddings to compute_values)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite.multiagent.mirror import MirrorMaskingTorchRLModule
from tests.masking_helpers import BOARD_CNN, board_batch, connect_four_module, random_boards


@pytest.fixture(scope="module")
def module() -> MirrorMaskingTorchRLModule:
    built = connect_four_module(mirror=True)
    assert isinstance(built, MirrorMaskingTorchRLModule)
    return built


def _boards(n: int) -> tuple[np.ndarray, np.ndarray]:
    return random_boards(n, full_column=1, density=0.3)  # a full column left of the centre


def _logits(module, boards, masks) -> np.ndarray:
    with torch.no_grad():
        out = module.forward_inference(board_batch(boards, masks))
    return out[Columns.ACTION_DIST_INPUTS].numpy()


def test_a_mirrored_board_gets_the_mirrored_moves(module) -> None:
    boards, masks = _boards(4)
    plain = _logits(module, boards, masks)
    mirrored = _logits(module, boards[:, :, ::-1].copy(), masks[:, ::-1].copy())
    np.testing.assert_allclose(mirrored, plain[:, ::-1], rtol=1e-5, atol=1e-5)
    probabilities = torch.softmax(torch.as_tensor(plain), dim=-1).numpy()
    assert probabilities[:, 1].max() < 1e-6  # the mask still rules, in the board's order:
    assert probabilities[:, 5].min() > 1e-4  # not on the mirrored column as well
    assert not np.allclose(plain[:, 0], plain[:, 6])  # symmetric play, not a symmetric board


def test_the_value_is_the_same_in_the_mirror(module) -> None:
    boards, masks = _boards(4)
    with torch.no_grad():
        plain = module.compute_values(board_batch(boards, masks))
        mirrored = module.compute_values(board_batch(boards[:, :, ::-1].copy(), masks))
    assert plain.shape == (4,)
    torch.testing.assert_close(mirrored, plain)


def test_training_sees_what_acting_sees(module) -> None:
    boards, masks = _boards(3)
    with torch.no_grad():
        acting = module.forward_inference(board_batch(boards, masks))[Columns.ACTION_DIST_INPUTS]
        batch = board_batch(boards, masks)
        values = module.compute_values(batch)  # unpacks the observation in place
        trained = module.forward_train(batch)
        from_embeddings = module.compute_values(batch, trained[Columns.EMBEDDINGS])
    torch.testing.assert_close(trained[Columns.ACTION_DIST_INPUTS], acting)
    torch.testing.assert_close(from_embeddings, values)


def test_a_copy_of_the_module_takes_its_weights(module) -> None:
    copy = RLModuleSpec.from_module(module).build()
    copy.set_state(module.get_state())
    boards, masks = _boards(2)
    np.testing.assert_allclose(_logits(copy, boards, masks), _logits(module, boards, masks))


@pytest.mark.parametrize(
    ("observation_space", "action_space"),
    [
        (gym.spaces.Box(0.0, 1.0, (6, 7, 2)), gym.spaces.Discrete(7)),  # no mask
        (
            gym.spaces.Dict(
                {
                    "observations": gym.spaces.Box(0.0, 1.0, (42,)),
                    "action_mask": gym.spaces.Box(0.0, 1.0, (7,)),
                }
            ),
            gym.spaces.Discrete(7),
        ),
        (
            gym.spaces.Dict(
                {
                    "observations": gym.spaces.Box(0.0, 1.0, (3, 3, 2)),
                    "action_mask": gym.spaces.Box(0.0, 1.0, (9,)),
                }
            ),
            gym.spaces.Discrete(9),
        ),
    ],
    ids=["not a dict", "not a board", "not one action per column"],
)
def test_what_it_cannot_mirror_is_refused(observation_space, action_space) -> None:
    with pytest.raises(ValueError, match="one action per column"):
        MirrorMaskingTorchRLModule(
            observation_space=observation_space,
            action_space=action_space,
            model_config=BOARD_CNN,
        )


def test_a_recurrent_model_is_refused(module) -> None:
    lstm = DefaultModelConfig(conv_filters=[[8, [4, 4], 1]], use_lstm=True, lstm_cell_size=8)
    with pytest.raises(ValueError, match="no recurrent model"):
        MirrorMaskingTorchRLModule(
            observation_space=module.observation_space,
            action_space=module.action_space,
            model_config=lstm,
        )
