"""Whole games of a two-player turn-based registry env between two players; win rates.

A player maps the observations of the games waiting on it to their moves, so that an
RLModule decides all of them in one forward pass (`module_player`); `scripted_player`
turns a fixed opponent of `opponents.py` into one. Self-play reports its win rates
against fixed opponents with these games, and so does `rlsuite.evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import astuple, dataclass, replace
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from rlsuite.multiagent.opponents import (
    Observation,
    Opponent,
    one_move_answers,
    players_for,
    plays_connect_four,
)

Player = Callable[[list[Observation], np.random.Generator], list[int]]


Answers = Callable[[Observation], tuple[list[int], list[int]]]


@dataclass(frozen=True)
class Tactics:
    """The learner's moves in positions with a one-move answer (`Answers`: the columns that
    win at once, and those that block the opponent's win): wins on the board and whether it
    took one, single threats (no win of its own, one opponent win) and whether it blocked."""

    wins_open: int = 0
    wins_taken: int = 0
    blocks_open: int = 0
    blocks_made: int = 0

    def add(self, answers: tuple[list[int], list[int]], move: int) -> Tactics:
        wins, threats = answers
        if wins:
            return replace(
                self, wins_open=self.wins_open + 1, wins_taken=self.wins_taken + (move in wins)
            )
        if len(threats) == 1:  # two or more cannot all be blocked
            return replace(
                self,
                blocks_open=self.blocks_open + 1,
                blocks_made=self.blocks_made + (move in threats),
            )
        return self

    @property
    def wins_taken_share(self) -> float | None:
        return self.wins_taken / self.wins_open if self.wins_open else None

    @property
    def blocks_made_share(self) -> float | None:
        return self.blocks_made / self.blocks_open if self.blocks_open else None

    def __add__(self, other: Tactics) -> Tactics:
        return Tactics(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


@dataclass(frozen=True)
class MatchResults:
    """Outcomes of a series of games from the learner's side, the games it moved first in,
    and its `Tactics` where `play_games` was given the game's `Answers`."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    first_games: int = 0
    first_wins: int = 0
    tactics: Tactics = Tactics()

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def first_win_rate(self) -> float:
        return self.first_wins / self.first_games if self.first_games else 0.0

    @property
    def second_win_rate(self) -> float:
        second = self.games - self.first_games
        return (self.wins - self.first_wins) / second if second else 0.0

    def add(
        self, learner_return: float, moved_first: bool = False, tactics: Tactics = Tactics()
    ) -> MatchResults:
        won = learner_return > 0
        return MatchResults(
            self.wins + won,
            self.draws + (learner_return == 0),
            self.losses + (learner_return < 0),
            self.first_games + moved_first,
            self.first_wins + (moved_first and won),
            self.tactics + tactics,
        )


def module_player(module: RLModule, explore: bool = False) -> Player:
    """An RLModule as a player: its greedy actions (the largest masked logits), or with
    `explore` actions sampled from its action distribution; one forward pass per batch."""

    @torch.no_grad()
    def moves(observations: list[Observation], rng: np.random.Generator) -> list[int]:
        # A fresh dict per call: the masking module pops the mask out of the batch.
        obs = {
            key: torch.as_tensor(np.stack([np.asarray(o[key]) for o in observations]))
            for key in observations[0]
        }
        batch = {Columns.OBS: obs}
        output = module.forward_exploration(batch) if explore else module.forward_inference(batch)
        logits = output[Columns.ACTION_DIST_INPUTS].double()
        if not explore:
            return [int(a) for a in torch.argmax(logits, dim=-1)]
        probabilities = torch.softmax(logits, dim=-1).numpy()
        return [int(rng.choice(len(p), p=p / p.sum())) for p in probabilities]

    return moves


def scripted_player(move: Opponent) -> Player:
    """A player of `opponents.py` (one observation at a time) for a batch of games."""

    def moves(observations: list[Observation], rng: np.random.Generator) -> list[int]:
        return [move(observation, rng) for observation in observations]

    return moves


def play_games(
    make_env: Callable[[], Any],
    player: Player,
    opponent: Player,
    games: int,
    seed: int = 0,
    answers: Answers | None = None,
) -> MatchResults:
    """`games` games of `player` against `opponent` on turn-based MultiAgentEnvs from
    `make_env`, all at once (each player acts for all games waiting on it in one call); the
    player moves first in the even games and second in the odd ones. With `answers`, the
    player's moves where a one-move win or block was on the board are counted too."""
    rng = np.random.default_rng(seed)
    tables = [_Game(make_env(), game, seed + game, answers) for game in range(games)]
    while any(not table.over for table in tables):
        for side, acting in ((True, player), (False, opponent)):
            waiting = [t for t in tables if not t.over and t.learner_to_move() is side]
            if waiting:
                actions = acting([t.observation for t in waiting], rng)
                for table, action in zip(waiting, actions, strict=True):
                    table.step(action)
    results = MatchResults()
    for table in tables:
        table.env.close()
        results = results.add(table.learner_return, table.learner_first, table.tactics)
    return results


class _Game:
    """One game in progress; the learner sits in seat `index % 2`."""

    def __init__(self, env: Any, index: int, seed: int, answers: Answers | None = None) -> None:
        self.env = env
        self.learner_first = index % 2 == 0
        self.learner = list(env.possible_agents)[index % 2]
        self.observations, _ = env.reset(seed=seed)
        self.learner_return = 0.0
        self.over = False
        self.answers = answers
        self.tactics = Tactics()

    @property
    def mover(self) -> str:
        (agent,) = self.observations  # one agent moves per step in a turn-based game
        return str(agent)

    @property
    def observation(self) -> Observation:
        return self.observations[self.mover]

    def learner_to_move(self) -> bool:
        return self.mover == self.learner

    def step(self, action: int) -> None:
        if self.answers and self.learner_to_move():
            self.tactics = self.tactics.add(self.answers(self.observation), action)
        self.observations, rewards, terminateds, truncateds, _ = self.env.step({self.mover: action})
        self.learner_return += float(rewards.get(self.learner, 0.0))
        self.over = bool(terminateds["__all__"] or truncateds["__all__"])


def against_fixed_players(
    make_env: Callable[[], Any], module: RLModule, player: Player, games: int, seed: int
) -> dict[str, MatchResults]:
    """`games` games of `player` (`module` playing) against each fixed player of
    `opponents.py` that knows the game: on connect four all three, with tactics counted;
    on another game the random player."""
    spaces = (module.observation_space, module.action_space)
    answers = one_move_answers if plays_connect_four(*spaces) else None
    return {
        name: play_games(make_env, player, scripted_player(move), games, seed, answers)
        for name, move in players_for(*spaces).items()
    }
