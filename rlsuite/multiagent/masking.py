"""RLlib's action-masking PPO RLModule, for games whose observations carry an `action_mask`.

`ActionMaskingTorchRLModule` (RLlib's `examples/rl_modules/classes/action_masking_rlm.py`)
builds PPO's networks for the `observations` part of a Dict observation and adds
log(mask) to the action logits, so illegal moves get zero probability when acting and in
the loss. The registry's turn-based games give exactly those keys (envs/multiagent.py).
`masked_ppo_spec(ones_plane=True)` adds a constant plane of ones to a board observation
inside the module (OnesPlaneMaskingTorchRLModule), so a CNN can tell the board's edge from
an empty square; `landing_plane=True` adds a plane marking where a piece dropped in each
column lands (LandingPlaneMaskingTorchRLModule); `threat_planes=True` adds that plane and
the squares where either player would complete four (ThreatPlanesMaskingTorchRLModule);
`mirror=True` makes the policy play a board and its mirror image alike
(rlsuite.multiagent.mirror); `landing_head=True` gives it a policy head that scores squares
and plays each column at its landing square (rlsuite.multiagent.landing_head). Scripted
players and the env keep the board as it is.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite.multiagent.landing_head import LandingHeadPPOTorchRLModule
from rlsuite.multiagent.mirror import MirrorMaskingTorchRLModule
from rlsuite.multiagent.rllib_masking import ActionMaskingRLModule, ActionMaskingTorchRLModule
from rlsuite.multiagent.threats import CONNECT, completing_squares, landing_squares


class _ExtraPlanesMaskingTorchRLModule(ActionMaskingTorchRLModule):
    """RLlib's masking module whose network reads planes computed from the board after the
    board's own planes; the env, the scripted players and the module's observation space
    keep the board as it is."""

    extra_low: tuple[float, ...] = ()
    extra_high: tuple[float, ...] = ()

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        not_a_board = ValueError(
            f"{type(self).__name__} needs a Dict observation space whose 'observations' "
            f"is a board of shape (height, width, planes), got {observation_space}"
        )
        if not isinstance(observation_space, gym.spaces.Dict):
            raise not_a_board
        board = observation_space.spaces.get("observations")
        if not isinstance(board, gym.spaces.Box) or len(board.shape) != 3:
            raise not_a_board
        self._check_board(board.shape)
        self.env_observation_space = observation_space
        extra = np.ones((*board.shape[:2], len(self.extra_low)), np.float32)
        low = extra * np.asarray(self.extra_low, np.float32)
        high = extra * np.asarray(self.extra_high, np.float32)
        with_planes = gym.spaces.Box(
            np.concatenate([board.low.astype(np.float32), low], axis=-1),
            np.concatenate([board.high.astype(np.float32), high], axis=-1),
            dtype=np.float32,
        )
        spaces = {**observation_space.spaces, "observations": with_planes}
        super().__init__(observation_space=gym.spaces.Dict(spaces), **kwargs)

    def setup(self) -> None:
        super().setup()
        # The env's space, not the network's: a copy made with RLModuleSpec.from_module
        # (a self-play snapshot) must add the planes once, not twice.
        self.observation_space = self.env_observation_space

    def _preprocess_batch(self, batch: dict[str, Any], **kwargs: Any) -> tuple[Any, dict]:
        action_mask, batch = super()._preprocess_batch(batch, **kwargs)
        board = batch[Columns.OBS]
        batch[Columns.OBS] = torch.cat([board, self._planes(board)], dim=-1)
        return action_mask, batch

    def _check_board(self, shape: tuple[int, ...]) -> None:
        """Refuse, in one line, a (height, width, planes) board the planes do not fit."""

    def _planes(self, board: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class OnesPlaneMaskingTorchRLModule(_ExtraPlanesMaskingTorchRLModule):
    """RLlib's masking module with a constant plane of ones after the board's planes.

    A CNN zero-pads the board, so off the board looks like an empty square; the ones plane
    (AlphaGo's "ones" input feature, Silver et al. 2016) tells the two apart, so a filter
    can see where the board ends: the bottom row has no empty square under it, and a line
    that runs off the edge is not an open line."""

    extra_low = (1.0,)
    extra_high = (1.0,)

    def _planes(self, board: torch.Tensor) -> torch.Tensor:
        return torch.ones_like(board[..., :1])


class LandingPlaneMaskingTorchRLModule(_ExtraPlanesMaskingTorchRLModule):
    """RLlib's masking module with a plane marking, in each column that is not full, the
    square a piece dropped there lands on (row 0 the top, as in PettingZoo's connect four).

    It is AlphaGo's legal-move input feature for a board with gravity: the moves are the
    columns, but whether a move wins or blocks depends on the square it lands on, which a
    CNN otherwise has to work out from the whole column. With the plane, a 4x4 filter sees
    three in a line and the square that completes it in one window. Every plane of the
    board is taken to hold pieces (connect four's: the mover's and the opponent's)."""

    extra_low = (0.0,)
    extra_high = (1.0,)

    def _planes(self, board: torch.Tensor) -> torch.Tensor:
        return landing_squares(board.sum(dim=-1).clamp(max=1.0)).unsqueeze(-1)


class ThreatPlanesMaskingTorchRLModule(_ExtraPlanesMaskingTorchRLModule):
    """RLlib's masking module with three planes after connect four's two (the mover's
    pieces, the opponent's): the landing squares (as LandingPlaneMaskingTorchRLModule), the
    squares where the mover would complete four and those where the opponent would
    (rlsuite.multiagent.threats: AlphaGo's tactical input features for this game). A win
    on the board is a landing square in the second plane, a move to block one in the third;
    a completing square above a landing square is one not to play under."""

    extra_low = (0.0, 0.0, 0.0)
    extra_high = (1.0, 1.0, 1.0)

    def _check_board(self, shape: tuple[int, ...]) -> None:
        if shape[2] != 2 or min(shape[:2]) < CONNECT:
            raise ValueError(
                f"{type(self).__name__} needs a board of two planes (the mover's pieces, the "
                f"opponent's) at least {CONNECT} squares each way, got shape {shape}"
            )

    def _planes(self, board: torch.Tensor) -> torch.Tensor:
        mine, theirs = board[..., 0], board[..., 1]
        occupied = (mine + theirs).clamp(max=1.0)
        empty = 1.0 - occupied
        planes = [
            landing_squares(occupied),
            completing_squares(mine, empty),
            completing_squares(theirs, empty),
        ]
        return torch.stack(planes, dim=-1)


class MirrorThreatPlanesMaskingTorchRLModule(
    ThreatPlanesMaskingTorchRLModule, MirrorMaskingTorchRLModule
):
    """The threat planes, played symmetrically (rlsuite.multiagent.mirror): the planes of a
    mirrored board are the mirrored planes, so the planes are added first, then mirrored."""


class LandingHeadThreatPlanesMaskingTorchRLModule(
    ThreatPlanesMaskingTorchRLModule, LandingHeadPPOTorchRLModule
):
    """The threat planes, and a policy that scores squares and plays each column at its
    landing square (rlsuite.multiagent.landing_head)."""


class MirrorLandingHeadThreatPlanesMaskingTorchRLModule(
    ThreatPlanesMaskingTorchRLModule, MirrorMaskingTorchRLModule, LandingHeadPPOTorchRLModule
):
    """The threat planes and the landing-square policy head, played symmetrically."""


# (planes, mirrored, landing head) -> module; a combination not here is refused in one line
_MODULES: dict[tuple[str | None, bool, bool], type[ActionMaskingTorchRLModule]] = {
    (None, False, False): ActionMaskingTorchRLModule,
    (None, True, False): MirrorMaskingTorchRLModule,
    ("ones_plane", False, False): OnesPlaneMaskingTorchRLModule,
    ("landing_plane", False, False): LandingPlaneMaskingTorchRLModule,
    ("threat_planes", False, False): ThreatPlanesMaskingTorchRLModule,
    ("threat_planes", True, False): MirrorThreatPlanesMaskingTorchRLModule,
    ("threat_planes", False, True): LandingHeadThreatPlanesMaskingTorchRLModule,
    ("threat_planes", True, True): MirrorLandingHeadThreatPlanesMaskingTorchRLModule,
}


def masked_ppo_spec(
    model_config: DefaultModelConfig | None = None,
    ones_plane: bool = False,
    landing_plane: bool = False,
    threat_planes: bool = False,
    mirror: bool = False,
    landing_head: bool = False,
) -> RLModuleSpec:
    """A PPO RLModule that applies the observation's action mask (the model config defaults
    to the algorithm's `.rl_module(model_config=...)`). Board planes, at most one of:
    `ones_plane` a constant plane (OnesPlaneMaskingTorchRLModule), `landing_plane` the
    squares a dropped piece lands on (LandingPlaneMaskingTorchRLModule), `threat_planes`
    those and the squares where either player would complete four
    (ThreatPlanesMaskingTorchRLModule). `mirror` makes the policy play the board and its
    mirror image alike (rlsuite.multiagent.mirror), alone or with `threat_planes`.
    `landing_head` (with `threat_planes`) scores squares and plays each column at its
    landing square (rlsuite.multiagent.landing_head)."""
    planes = {
        "ones_plane": ones_plane,
        "landing_plane": landing_plane,
        "threat_planes": threat_planes,
    }
    chosen = [name for name, on in planes.items() if on]
    if len(chosen) > 1:
        raise ValueError(
            f"masked_ppo_spec takes one of {', '.join(planes)}, not {' and '.join(chosen)}"
        )
    key = (chosen[0] if chosen else None, mirror, landing_head)
    if landing_head and key not in _MODULES:
        raise ValueError("masked_ppo_spec: landing_head=True goes with threat_planes=True")
    if key not in _MODULES:
        raise ValueError(
            f"masked_ppo_spec: mirror=True goes with threat_planes or no planes, not {key[0]}"
        )
    return RLModuleSpec(module_class=_MODULES[key], model_config=model_config)


__all__ = [
    "ActionMaskingRLModule",
    "ActionMaskingTorchRLModule",
    "LandingHeadThreatPlanesMaskingTorchRLModule",
    "LandingPlaneMaskingTorchRLModule",
    "MirrorLandingHeadThreatPlanesMaskingTorchRLModule",
    "MirrorMaskingTorchRLModule",
    "MirrorThreatPlanesMaskingTorchRLModule",
    "OnesPlaneMaskingTorchRLModule",
    "ThreatPlanesMaskingTorchRLModule",
    "masked_ppo_spec",
]
