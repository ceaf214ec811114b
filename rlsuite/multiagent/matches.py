"""Whole games of a two-player turn-based registry env between two players; win rates.

A player maps the observations of the games waiting on it to their moves, so that an
RLModule decides all of them in one forward pass (`module_player`); `scripted_player`
turns a fixed opponent of `opponents.py` into one. Self-play reports its win rates
against fixed opponents with these games, and so does `rlsuite.evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from rlsuite.multiagent.opponents import Observation, Opponent

Player = Callable[[list[Observation], np.random.Generator], list[int]]


@dataclass(frozen=True)
class MatchResults:
    """Outcomes of a series of games, from the first player's side."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def add(self, learner_return: float) -> MatchResults:
        return MatchResults(
            self.wins + (learner_return > 0),
            self.draws + (learner_return == 0),
            self.losses + (learner_return < 0),
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
    make_env: Callable[[], Any], player: Player, opponent: Player, games: int, seed: int = 0
) -> MatchResults:
    """`games` games of `player` against `opponent` on turn-based MultiAgentEnvs from
    `make_env`, all at once (each player acts for all games waiting on it in one call); the
    player moves first in the even games and second in the odd ones."""
    rng = np.random.default_rng(seed)
    tables = [_Game(make_env(), game, seed + game) for game in range(games)]
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
        results = results.add(table.learner_return)
    return results


class _Game:
    """One game in progress; the learner sits in seat `index % 2`."""

    def __init__(self, env: Any, index: int, seed: int) -> None:
        self.env = env
        self.learner = list(env.possible_agents)[index % 2]
        self.observations, _ = env.reset(seed=seed)
        self.learner_return = 0.0
        self.over = False

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
        self.observations, rewards, terminateds, truncateds, _ = self.env.step({self.mover: action})
        self.learner_return += float(rewards.get(self.learner, 0.0))
        self.over = bool(terminateds["__all__"] or truncateds["__all__"])
