"""Connect-four opponents (random, one- and two-ply lookahead) on real boards and real games."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns

from rlsuite import envs
from rlsuite.multiagent.matches import MatchResults, Tactics, play_games, scripted_player
from rlsuite.multiagent.opponents import (
    SCRIPTED_MODULES,
    CarefulRLModule,
    HeuristicRLModule,
    Opponent,
    RandomLegalRLModule,
    careful_move,
    completes_four,
    heuristic_move,
    landing_row,
    one_move_answers,
    random_move,
)

GAME = "classic/connect_four"


def position(*rows: str) -> dict[str, np.ndarray]:
    """An observation from the bottom rows of a board, bottom row last: X are the pieces
    of the player to move, O the opponent's, . empty; full columns are masked."""
    board = np.zeros((6, 7, 2), np.float32)
    for offset, row in enumerate(reversed(rows)):
        for column, piece in enumerate(row):
            if piece in "XO":
                board[5 - offset, column, "XO".index(piece)] = 1.0
    mask = (board[0].sum(axis=-1) == 0).astype(np.float32)
    return {"observations": board, "action_mask": mask}


def test_position_matches_the_registry_env() -> None:
    env = envs.make(GAME)
    observations, _ = env.reset(seed=0)
    observations, *_ = env.step({"player_0": 3})  # X in the middle of the bottom row
    seen = observations["player_1"]  # player_1 to move: player_0's piece is O to it
    expected = position("...O...")
    np.testing.assert_array_equal(seen["observations"], expected["observations"])
    np.testing.assert_array_equal(seen["action_mask"], expected["action_mask"])


def test_landing_row() -> None:
    board = position("O......", "X......", "XO.....")["observations"] > 0.5
    assert [landing_row(board, c) for c in (0, 1, 2)] == [2, 4, 5]
    full = position(*["X......"] * 6)["observations"] > 0.5
    assert landing_row(full, 0) is None


@pytest.mark.parametrize(
    ("rows", "column"),
    [
        (["XXX.OO."], 3),  # horizontal
        (["X..O...", "X..O...", "X.OO..."], 0),  # vertical
        (["..XO...", ".XOO...", "XOOO..."], 3),  # diagonal, up to the right
    ],
)
def test_completes_four_finds_lines(rows: list[str], column: int) -> None:
    board = position(*rows)["observations"] > 0.5
    assert completes_four(board, 0, column)


LOOKAHEADS = pytest.mark.parametrize("move", [heuristic_move, careful_move])


@LOOKAHEADS
def test_lookaheads_win_when_they_can(move: Opponent) -> None:
    rng = np.random.default_rng(0)
    assert {move(position("XXX.OO."), rng) for _ in range(20)} == {3}


@LOOKAHEADS
def test_lookaheads_block_an_immediate_loss(move: Opponent) -> None:
    rng = np.random.default_rng(0)
    # O threatens the bottom row at column 3; X has no win of its own.
    assert {move(position("OOO.X.X"), rng) for _ in range(20)} == {3}
    # O threatens to complete column 6 vertically.
    assert {move(position("......O", "X.....O", "X.....O"), rng) for _ in range(20)} == {6}


@LOOKAHEADS
def test_lookaheads_prefer_winning_to_blocking(move: Opponent) -> None:
    rng = np.random.default_rng(0)
    board = position("X......", "X...O..", "X..OO.O")  # X wins in column 0, O would in 5
    assert move(board, rng) == 0


def test_careful_never_hands_over_a_win() -> None:
    # O's three on the second row wins on column 3's second square once column 3's bottom
    # square is taken; nobody can win or must block now.
    board = position("OOO....", "XOX.XOX")
    rng = np.random.default_rng(0)
    assert 3 in {heuristic_move(board, rng) for _ in range(100)}
    assert {careful_move(board, rng) for _ in range(100)} == {0, 1, 2, 4, 5, 6}


def test_moves_stay_legal() -> None:
    rng = np.random.default_rng(0)
    obs = position(*["XOXOXO."] * 6)  # only column 6 is open
    assert {random_move(obs, rng) for _ in range(30)} == {6}
    assert {heuristic_move(obs, rng) for _ in range(30)} == {6}
    open_board = position(".......")
    assert {random_move(open_board, rng) for _ in range(200)} == set(range(7))


def scripted_games(player: Opponent, opponent: Opponent, games: int) -> MatchResults:
    """Real games of one scripted player against another, seed 0."""
    make = functools.partial(envs.make, GAME)
    return play_games(make, scripted_player(player), scripted_player(opponent), games, seed=0)


def test_heuristic_beats_random_in_real_games() -> None:
    games = scripted_games(heuristic_move, random_move, 100)
    assert games.games == 100
    # The one-move lookahead wins 94% to 99% of 100 games against random (seeds 0-7).
    assert games.win_rate > 0.85, games


def test_careful_beats_the_heuristic_in_real_games() -> None:
    games = scripted_games(careful_move, heuristic_move, 200)
    # 200 games, seeds 0-3: 107-120 won, 66-78 lost, 12-16 drawn.
    assert games.wins > 1.2 * games.losses, games


def test_random_against_random_is_even_and_seats_alternate() -> None:
    games = play_games(
        lambda: envs.make(GAME), scripted_player(random_move), scripted_player(random_move), 200, 1
    )
    assert games.wins + games.losses + games.draws == 200
    assert 0.35 < games.win_rate < 0.65, games  # both seats, so neither side's first-move edge


def test_match_results_count_outcomes_seats_and_tactics() -> None:
    took_a_win = Tactics().add(([3], []), 3)
    results = (
        MatchResults()
        .add(1.0, moved_first=True, tactics=took_a_win)
        .add(-1.0, moved_first=True)
        .add(0.0)
        .add(1.0, tactics=took_a_win)
    )
    assert (results.wins, results.draws, results.losses, results.games) == (2, 1, 1, 4)
    assert results.win_rate == 0.5
    assert (results.first_games, results.first_win_rate, results.second_win_rate) == (2, 0.5, 0.5)
    assert results.tactics == Tactics(wins_open=2, wins_taken=2)


def test_one_move_answers_name_the_wins_and_the_threats() -> None:
    assert one_move_answers(position("XXX.OO.")) == ([3], [])
    assert one_move_answers(position("OOO.X.X")) == ([], [3])
    # X wins in column 0, O would in column 5 (the bottom row's "OO.O").
    assert one_move_answers(position("X......", "X...O..", "X..OO.O")) == ([0], [5])
    assert one_move_answers(position(".......")) == ([], [])


def test_the_seat_moving_first_is_the_first_games() -> None:
    """Whoever drops four pieces into one column first wins: the player that fills column 0
    wins every game it moves first in against one that fills column 6, and loses the rest."""

    def column(index: int) -> Opponent:
        return lambda observation, rng: index

    make = functools.partial(envs.make, GAME)
    games = play_games(make, scripted_player(column(0)), scripted_player(column(6)), 6)
    assert (games.first_games, games.first_win_rate, games.second_win_rate) == (3, 1.0, 0.0)


def test_tactics_count_wins_and_single_blocks_only() -> None:
    tactics = (
        Tactics()
        .add(([3], [5]), 5)  # blocked, but a win was on the board: a missed win
        .add(([], [2]), 2)  # a single threat blocked
        .add(([], [2]), 4)  # missed
        .add(([], [1, 6]), 1)  # two threats: no block saves it, not counted
        .add(([], []), 0)
    )
    assert tactics == Tactics(wins_open=1, wins_taken=0, blocks_open=2, blocks_made=1)


def test_games_count_the_heuristics_answers_and_not_randoms() -> None:
    """Real games with `one_move_answers`: the one-move lookahead takes every win and blocks
    every single threat it meets; a random player misses most of them."""
    make = functools.partial(envs.make, GAME)
    heuristic = play_games(
        make, scripted_player(heuristic_move), scripted_player(random_move), 40, 0, one_move_answers
    )
    tactics = heuristic.tactics
    assert heuristic.first_games == 20
    assert tactics.wins_open > 0 and tactics.wins_taken == tactics.wins_open, tactics
    assert tactics.blocks_open > 0 and tactics.blocks_made == tactics.blocks_open, tactics
    chance = play_games(
        make, scripted_player(random_move), scripted_player(heuristic_move), 40, 0, one_move_answers
    ).tactics
    assert chance.wins_taken < chance.wins_open and chance.blocks_made < chance.blocks_open, chance


def test_scripted_modules_by_name() -> None:
    assert {
        "random": RandomLegalRLModule,
        "heuristic": HeuristicRLModule,
        "careful": CarefulRLModule,
    } == SCRIPTED_MODULES


@pytest.mark.parametrize("module_class", [RandomLegalRLModule, HeuristicRLModule, CarefulRLModule])
def test_scripted_rl_modules_play_legal_moves(module_class: type) -> None:
    env = envs.make(GAME)
    space = env.get_observation_space("player_0")
    module = module_class(observation_space=space, action_space=gym.spaces.Discrete(7))
    boards = [position(*["XOXOXO."] * 6), position("XXX.OO.")]
    batch = {
        Columns.OBS: {key: torch.as_tensor(np.stack([b[key] for b in boards])) for key in boards[0]}
    }
    actions = module.forward_inference(batch)[Columns.ACTIONS]
    assert actions[0] == 6  # the only open column
    if module_class is not RandomLegalRLModule:
        assert actions[1] == 3  # the winning move
