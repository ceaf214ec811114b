"""Fixed opponents for two-player board games: a random player for any game with action
masks, and two lookahead heuristics for connect four.

They read the observation the registry's turn-based games give (see envs/multiagent.py):
`observations` is the board seen by the player to move and `action_mask` marks the legal
moves. The heuristics know connect four only (`plays_connect_four`): a 6x7x2 board (plane 0
the mover's pieces, plane 1 the opponent's, row 0 at the top) and one move per column.

- `random_move`: a uniformly random legal move.
- `heuristic_move`: win now if a column does it, else block a column where the opponent
  would win on its next move, else random (the usual "one-step lookahead" baseline).
- `careful_move`: the same, but its random move avoids columns that would let the
  opponent win on the square just above (a two-ply lookahead: it no longer hands over
  wins, the heuristic's commonest mistake). Self-play evaluates against it as a player
  that no experiment trains against.

As RLModules they join a self-play opponent pool (`RandomLegalRLModule`,
`HeuristicRLModule`, `CarefulRLModule`; by name in `SCRIPTED_MODULES`). RLlib's own
RandomRLModule samples from the whole action space: in connect four an illegal move ends
the game as a loss, so a random opponent that ignores the mask loses most games by itself
and win rates against it mean little.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

ROWS, COLUMNS, CONNECT = 6, 7, 4
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # right, down, two diagonals

Observation = Mapping[str, np.ndarray]
Opponent = Callable[[Observation, np.random.Generator], int]


def legal_columns(observation: Observation) -> np.ndarray:
    return np.flatnonzero(np.asarray(observation["action_mask"]) > 0)


def plays_connect_four(observation_space: gym.Space | None, action_space: gym.Space | None) -> bool:
    """Whether an agent's spaces are connect four's, as the connect-four players read them."""
    board = (
        observation_space.spaces.get("observations")
        if isinstance(observation_space, gym.spaces.Dict)
        else None
    )
    return (
        isinstance(board, gym.spaces.Box)
        and board.shape == (ROWS, COLUMNS, 2)
        and isinstance(action_space, gym.spaces.Discrete)
        and int(action_space.n) == COLUMNS
    )


def random_move(observation: Observation, rng: np.random.Generator) -> int:
    """A uniformly random legal move."""
    return int(rng.choice(legal_columns(observation)))


def heuristic_move(observation: Observation, rng: np.random.Generator) -> int:
    """Win if possible, else block the opponent's immediate win, else random."""
    board = np.asarray(observation["observations"]) > 0.5
    legal = legal_columns(observation)
    forced = _win_or_block(board, legal)
    return forced if forced is not None else int(rng.choice(legal))


def careful_move(observation: Observation, rng: np.random.Generator) -> int:
    """Win, else block, else random among the columns that do not hand over a win."""
    board = np.asarray(observation["observations"]) > 0.5
    legal = legal_columns(observation)
    forced = _win_or_block(board, legal)
    if forced is not None:
        return forced
    safe = [int(column) for column in legal if not _opens_win_above(board, int(column))]
    return int(rng.choice(safe if safe else legal))


def one_move_answers(observation: Observation) -> tuple[list[int], list[int]]:
    """The columns that win at once for the player to move, and those where the opponent
    would win on its next move (the ones to block)."""
    board = np.asarray(observation["observations"]) > 0.5
    legal = legal_columns(observation)
    return _completing(board, legal, 0), _completing(board, legal, 1)


def _completing(board: np.ndarray, legal: np.ndarray, plane: int) -> list[int]:
    return [int(column) for column in legal if completes_four(board, plane, int(column))]


def _win_or_block(board: np.ndarray, legal: np.ndarray) -> int | None:
    for plane in (0, 1):  # 0: my winning move, 1: the opponent's, which I take first
        columns = _completing(board, legal, plane)
        if columns:
            return columns[0]
    return None


def _opens_win_above(board: np.ndarray, column: int) -> bool:
    """Whether my piece in `column` lets the opponent win on the square above it."""
    row = landing_row(board, column)
    if row is None or row == 0:
        return False
    after = board.copy()
    after[row, column, 0] = True
    return completes_four(after, 1, column)


def landing_row(board: np.ndarray, column: int) -> int | None:
    """The row a piece dropped into `column` comes to rest in (None: the column is full)."""
    empty = np.flatnonzero(~board[:, column].any(axis=-1))
    return int(empty.max()) if empty.size else None


def completes_four(board: np.ndarray, plane: int, column: int) -> bool:
    """Whether dropping a piece of `plane`'s player into `column` makes four in a row."""
    row = landing_row(board, column)
    if row is None:
        return False
    pieces = board[..., plane]
    for d_row, d_col in DIRECTIONS:
        run = (
            1 + _run(pieces, row, column, d_row, d_col) + _run(pieces, row, column, -d_row, -d_col)
        )
        if run >= CONNECT:
            return True
    return False


def _run(pieces: np.ndarray, row: int, column: int, d_row: int, d_col: int) -> int:
    """Pieces in a line from (row, column), exclusive, in one direction."""
    count = 0
    row, column = row + d_row, column + d_col
    while 0 <= row < ROWS and 0 <= column < COLUMNS and pieces[row, column]:
        count += 1
        row, column = row + d_row, column + d_col
    return count


OPPONENTS: dict[str, Opponent] = {
    "random": random_move,
    "heuristic": heuristic_move,
    "careful": careful_move,
}


def players_for(
    observation_space: gym.Space | None, action_space: gym.Space | None
) -> dict[str, Opponent]:
    """The fixed opponents that can play the game of these spaces."""
    if plays_connect_four(observation_space, action_space):
        return dict(OPPONENTS)
    return {name: move for name, move in OPPONENTS.items() if name not in CONNECT_FOUR_PLAYERS}


class _ScriptedRLModule(RLModule):
    """A fixed player as an RLModule: picks actions itself (no distribution to sample from,
    no weights, never trained; keep it out of `policies_to_train`). A plain RLModule, not a
    torch one, like RLlib's RandomRLModule: torch learners then give it no optimizer."""

    applies_action_mask = True  # rlsuite.multiagent.validate accepts it for masked games
    move: Opponent = staticmethod(random_move)
    connect_four_only = False

    def setup(self) -> None:
        # Refused when built (rlsuite.multiagent.validate builds every policy's module before
        # Ray starts): on another board the heuristics would index out of it in the trial.
        if self.connect_four_only and not plays_connect_four(
            self.observation_space, self.action_space
        ):
            raise ValueError(
                f"{type(self).__name__} plays connect four only (a 6x7 board of two planes, "
                f"7 columns), got {self.observation_space} and {self.action_space}"
            )
        self._rng = np.random.default_rng()

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observations = batch[Columns.OBS]
        masks = _numpy(observations["action_mask"])
        boards = _numpy(observations["observations"])
        actions = [
            self.move({"observations": board, "action_mask": mask}, self._rng)
            for board, mask in zip(boards, masks, strict=True)
        ]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} plays fixed moves and is never trained")


class RandomLegalRLModule(_ScriptedRLModule):
    """Uniformly random legal moves."""

    move = staticmethod(random_move)


class HeuristicRLModule(_ScriptedRLModule):
    """Win, else block, else random."""

    move = staticmethod(heuristic_move)
    connect_four_only = True


class CarefulRLModule(_ScriptedRLModule):
    """Win, else block, else random without handing over a win."""

    move = staticmethod(careful_move)
    connect_four_only = True


SCRIPTED_MODULES: dict[str, type[RLModule]] = {
    "random": RandomLegalRLModule,
    "heuristic": HeuristicRLModule,
    "careful": CarefulRLModule,
}
CONNECT_FOUR_PLAYERS = tuple(
    name for name, module in SCRIPTED_MODULES.items() if getattr(module, "connect_four_only", False)
)


def _numpy(value: Any) -> np.ndarray:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
