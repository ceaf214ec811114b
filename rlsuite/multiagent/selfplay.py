"""Self-play with an opponent pool for two-player games, as in RLlib's self-play examples
(`examples/multi_agent/self_play_with_open_spiel.py` and its `SelfPlayCallback`).

One policy, `main`, learns; its opponent in each game is drawn from a pool of frozen
policies: at first a random player, later snapshots of `main` itself. After each training
iteration the callback reads `main`'s win rate against the pool in that iteration's games;
above `win_rate_threshold` it freezes a copy of `main` (a new RLModule added with
`Algorithm.add_module`, given the learner's weights: `league.py`) and from then on draws
opponents among the newest `max_snapshots` snapshots (older ones stay in the Algorithm,
unplayed: RLlib's env runners may still hold unfinished games against them). Every
`evaluation_interval` iterations it also plays `evaluation_games` whole games against the
fixed players of `opponents.py` that know the game (on connect four all three, on another
game the random player) and reports those win rates (also after the first iteration, as a
baseline).

    config.multi_agent(**opponent_pool("classic/connect_four"))
    config.rl_module(rl_module_spec=pool_modules(masked_ppo_spec()))
    config.callbacks(selfplay_callback(win_rate_threshold=0.8))

Additions from AlphaStar's league (Vinyals et al. 2019): scripted players that stay in
the pool (`opponent_pool(..., fixed=("heuristic",))`, the same `fixed` for `pool_modules`),
and `opponent_sampling="pfsp"`, prioritized fictitious self-play: each opponent is drawn
with weight (1 - x)^2 of the learner's win rate x against it in its recent training games
(`env_runners/pool_win_rates/<opponent>`), so the games go where the learner still loses.
The weights are sent to the env runners' mapping after every iteration. A third:
main exploiters (`opponent_pool(..., exploiters=("main_exploiter",))`, the same names for
`pool_modules`), policies that train beside the learner and play only against it; with
`exploiter_reset_below=0.3`, an exploiter against which the learner wins less than that
share of an iteration's games is frozen into the pool and starts afresh (`league.py`).

Snapshots live in the Algorithm and its checkpoints; `--resume`, PBT's exploit and
`Algorithm.from_checkpoint` bring them back with the pool as it was, PFSP's smoothed win
rates included (`league_restore.py`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ray.rllib.callbacks.callbacks import RLlibCallback

from rlsuite import envs, metrics
from rlsuite.errors import UsageError
from rlsuite.multiagent.league import (
    add_frozen_copy,
    copies_made,
    exploiters_to_renew,
    next_copy_name,
    renew_exploiter,
    set_mapping,
)
from rlsuite.multiagent.league_restore import restore_league_first
from rlsuite.multiagent.matches import (
    MatchResults,
    Tactics,
    against_fixed_players,
    module_player,
)
from rlsuite.multiagent.pool import (
    LEARNER,
    RANDOM,
    OpponentPool,
    check_self_play,
    is_copy,
    opponent_pool,
    pool_modules,
)
from rlsuite.results import lookup

__all__ = [
    "LEARNER",
    "RANDOM",
    "OpponentPool",
    "SelfPlayCallback",
    "check_self_play",
    "opponent_pool",
    "pfsp_weights",
    "pool_modules",
    "selfplay_callback",
]

SAMPLINGS = ("uniform", "pfsp")
# PFSP's weighting f(x) = (1 - x)^2 of the learner's win rate x against an opponent
# ("f_hard" in AlphaStar, Vinyals et al. 2019). The floor keeps beaten opponents in a few
# games, so that a win rate that falls again is seen; an opponent not yet played counts
# as an even match.
PFSP_POWER = 2.0
PFSP_FLOOR = 0.02
UNPLAYED_WIN_RATE = 0.5
EVALUATION_SEED = 1_000_000  # games against fixed opponents use their own random stream


def selfplay_callback(
    win_rate_threshold: float = 0.95,
    max_snapshots: int = 10,
    evaluation_interval: int = 5,
    evaluation_games: int = 100,
    opponent_sampling: str = "uniform",
    exploiter_reset_below: float | None = None,
) -> Callable[[], SelfPlayCallback]:
    """The callback for `.callbacks()`, its settings checked now (not inside a trial)."""
    if exploiter_reset_below is not None and not 0 < exploiter_reset_below < 1:
        raise UsageError(
            f"exploiter_reset_below={exploiter_reset_below}: the learner's win rate against an "
            "exploiter below which it is renewed must lie in (0, 1); None never renews"
        )
    if opponent_sampling not in SAMPLINGS:
        raise UsageError(
            f"opponent_sampling={opponent_sampling!r}: choose {' or '.join(map(repr, SAMPLINGS))}"
        )
    if not 0 < win_rate_threshold <= 1:
        raise UsageError(
            f"win_rate_threshold={win_rate_threshold}: a win rate above which to add a snapshot must lie in (0, 1]"
        )
    for name, value, low in (
        ("max_snapshots", max_snapshots, 1),
        ("evaluation_interval", evaluation_interval, 0),
        ("evaluation_games", evaluation_games, 1),
    ):
        if not isinstance(value, int) or value < low:
            raise UsageError(f"{name}={value!r}: must be an integer of at least {low}")
    return functools.partial(
        SelfPlayCallback,
        win_rate_threshold=win_rate_threshold,
        max_snapshots=max_snapshots,
        evaluation_interval=evaluation_interval,
        evaluation_games=evaluation_games,
        opponent_sampling=opponent_sampling,
        exploiter_reset_below=exploiter_reset_below,
    )


def pfsp_weights(members: tuple[str, ...], win_rates: Mapping[str, float]) -> tuple[float, ...]:
    """PFSP's draw weight of each pool member from the learner's win rate against it."""
    return tuple(
        max((1.0 - win_rates.get(member, UNPLAYED_WIN_RATE)) ** PFSP_POWER, PFSP_FLOOR)
        for member in members
    )


class SelfPlayCallback(RLlibCallback):
    """Logs the learner's win rate against the pool, grows the pool, plays evaluation games."""

    def __init__(
        self,
        win_rate_threshold: float = 0.95,
        max_snapshots: int = 10,
        evaluation_interval: int = 5,
        evaluation_games: int = 100,
        opponent_sampling: str = "uniform",
        exploiter_reset_below: float | None = None,
    ) -> None:
        super().__init__()
        self.win_rate_threshold = win_rate_threshold
        self.max_snapshots = max_snapshots
        self.evaluation_interval = evaluation_interval
        self.evaluation_games = evaluation_games
        self.opponent_sampling = opponent_sampling
        self.exploiter_reset_below = exploiter_reset_below

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        if isinstance(algorithm.config.policy_mapping_fn, OpponentPool):
            restore_league_first(algorithm)  # --resume and PBT keep the pool's snapshots

    def on_episode_end(
        self,
        *,
        episode: Any,
        prev_episode_chunks: list[Any] | None = None,
        env_runner: Any = None,
        metrics_logger: Any = None,
        **kwargs: Any,
    ) -> None:
        mapping = env_runner.config.policy_mapping_fn
        if not isinstance(mapping, OpponentPool):
            return
        modules = {agent: episode.module_for(agent) for agent in mapping.seats}
        learners = [agent for agent, module in modules.items() if module == mapping.learner]
        if len(learners) != 1:
            return  # not a learner-vs-pool game
        (opponent,) = (module for module in modules.values() if module != mapping.learner)
        chunks = [*(prev_episode_chunks or []), episode]  # a game may span iterations
        won = float(sum(_agent_return(chunk, learners[0]) for chunk in chunks) > 0)
        # Means over this iteration's games only: after a snapshot joins, older games
        # against weaker opponents must not count towards the next one. Games against an
        # exploiter are not games against the pool: they do not bring a snapshot.
        if opponent not in mapping.exploiters:
            metrics_logger.log_value(metrics.WIN_RATE_KEY, won, reduce="mean", clear_on_reduce=True)
        metrics_logger.log_value(
            (metrics.POOL_WIN_RATES_KEY, opponent), won, reduce="mean", clear_on_reduce=True
        )

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        mapping = algorithm.config.policy_mapping_fn
        if not isinstance(mapping, OpponentPool):
            return
        win_rate = lookup(result, metrics.WIN_RATE)
        if win_rate is not None and win_rate > self.win_rate_threshold:
            mapping = self._add_snapshot(algorithm, mapping)
        if self.exploiter_reset_below is not None:
            mapping = self._renew_exploiters(algorithm, mapping, result)
        if self.opponent_sampling == "pfsp":
            mapping = self._reweigh(algorithm, mapping, result)
        _put(result, metrics.SNAPSHOTS, copies_made(algorithm.config.policies, mapping.learner))
        if mapping.exploiters:
            made = sum(copies_made(algorithm.config.policies, e) for e in mapping.exploiters)
            _put(result, metrics.EXPLOITER_SNAPSHOTS, made)
        interval, iteration = self.evaluation_interval, algorithm.iteration
        if interval and (iteration == 1 or iteration % interval == 0):  # 1: the baseline
            games = self.evaluate(algorithm, mapping.learner)
            for name, results in games.items():
                _put(result, metrics.win_rate_vs(name), results.win_rate)
            tactics = sum((results.tactics for results in games.values()), Tactics())
            for key, share in (
                (metrics.WINS_TAKEN, tactics.wins_taken_share),
                (metrics.THREATS_BLOCKED, tactics.blocks_made_share),
            ):
                if share is not None:  # none of the games had such a position
                    _put(result, key, share)

    def evaluate(self, algorithm: Any, learner: str) -> dict[str, MatchResults]:
        """The learner's greedy games against each fixed opponent that knows the game:
        outcomes, and on connect four its tactics."""
        config = algorithm.config
        module = algorithm.get_module(learner)
        return against_fixed_players(
            lambda: envs.make(config.env, config.env_config),
            module,
            module_player(module),
            self.evaluation_games,
            EVALUATION_SEED,
        )

    def _reweigh(self, algorithm: Any, mapping: OpponentPool, result: dict) -> OpponentPool:
        """PFSP: new draw weights from this iteration's win rates, averaged with the
        earlier ones (an opponent drawn rarely plays few games an iteration)."""
        rates = dict(mapping.win_rates)
        for opponent, rate in (lookup(result, metrics.POOL_WIN_RATES) or {}).items():
            if opponent not in mapping.members or not math.isfinite(rate):
                continue  # an exploiter; or no games this iteration (RLlib keeps NaN)
            earlier = rates.get(opponent, rate)
            rates[opponent] = (earlier + float(rate)) / 2
        weights = pfsp_weights(mapping.members, rates)
        total = sum(weights)
        for member, weight in zip(mapping.members, weights, strict=True):
            _put(result, f"{metrics.OPPONENT_SHARES}/{member}", weight / total)
        kept = tuple((member, rates[member]) for member in mapping.members if member in rates)
        mapping = replace(mapping, weights=weights, win_rates=kept)
        if mapping != algorithm.config.policy_mapping_fn:
            set_mapping(algorithm, mapping)
        return mapping

    def _add_snapshot(self, algorithm: Any, mapping: OpponentPool) -> OpponentPool:
        """Freeze a copy of the learner into the pool; the random player leaves it."""
        snapshot = next_copy_name(algorithm, mapping.learner)
        snapshots = [p for p in mapping.opponents if is_copy(p, mapping.learner)]
        pool = (*snapshots, snapshot)[-self.max_snapshots :]
        new_mapping = replace(mapping, opponents=pool, weights=())
        add_frozen_copy(algorithm, mapping.learner, snapshot, new_mapping)
        return new_mapping

    def _renew_exploiters(
        self, algorithm: Any, mapping: OpponentPool, result: dict
    ) -> OpponentPool:
        """Freeze into the pool each exploiter that beat the learner often enough in this
        iteration's games, and restart it; PFSP starts the copy at the learner's win rate
        against the exploiter, so the learner meets it at once."""
        assert self.exploiter_reset_below is not None
        rates = lookup(result, metrics.POOL_WIN_RATES) or {}
        for exploiter in exploiters_to_renew(mapping, result, self.exploiter_reset_below):
            mapping = renew_exploiter(algorithm, mapping, exploiter, self.max_snapshots)
            if self.opponent_sampling == "pfsp":  # _reweigh hands the rate on
                copy_rate = (mapping.fixed[-1], float(rates[exploiter]))
                mapping = replace(mapping, win_rates=(*mapping.win_rates, copy_rate))
        return mapping


def _agent_return(episode: Any, agent: str) -> float:
    single = episode.agent_episodes.get(agent)
    return float(single.get_return()) if single is not None else 0.0


def _put(result: dict[str, Any], key: str, value: Any) -> None:
    *groups, leaf = key.split("/")
    for group in groups:
        result = result.setdefault(group, {})
    result[leaf] = value
