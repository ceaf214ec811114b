"""Self-play with an opponent pool for two-player games, as in RLlib's self-play examples
(`examples/multi_agent/self_play_with_open_spiel.py` and its `SelfPlayCallback`).

One policy, `main`, learns; its opponent in each game is drawn from a pool of frozen
policies: at first a random player, later snapshots of `main` itself. After each training
iteration the callback reads `main`'s win rate against the pool in that iteration's games;
above `win_rate_threshold` it freezes a copy of `main` (a new RLModule added with
`Algorithm.add_module`, its weights set with `Algorithm.set_state`) and from then on draws
opponents among the newest `max_snapshots` snapshots (older ones stay in the Algorithm,
unplayed: RLlib's env runners may still hold unfinished games against them). Every
`evaluation_interval` iterations it also plays `evaluation_games` whole games against the
fixed random and heuristic players of `opponents.py` (and after the first iteration, as a
baseline) and reports those win rates.

    config.multi_agent(**opponent_pool("classic/connect_four"))
    config.rl_module(rl_module_spec=pool_modules(masked_ppo_spec()))
    config.callbacks(selfplay_callback(win_rate_threshold=0.8))

Snapshots live in the Algorithm and its checkpoints (`Algorithm.from_checkpoint` brings
them back); `--resume` rebuilds the Algorithm from the experiment's config and restores
`main` only, so a resumed run starts its pool again from the random player.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite import envs, metrics
from rlsuite.errors import UsageError
from rlsuite.multiagent.matches import module_player, play_games, scripted_player
from rlsuite.multiagent.opponents import OPPONENTS, RandomLegalRLModule
from rlsuite.multiagent.policies import agent_spaces
from rlsuite.results import lookup

LEARNER = "main"
RANDOM = "random"
EVALUATION_SEED = 1_000_000  # games against fixed opponents use their own random stream


@dataclass(frozen=True)
class OpponentPool:
    """The policy mapping: in each episode the learner takes one seat (the first in about
    half of the episodes) and an opponent drawn uniformly from the pool the other. Both
    draws are seeded by the episode id, so the two agents of an episode agree."""

    seats: tuple[str, str]
    learner: str = LEARNER
    opponents: tuple[str, ...] = (RANDOM,)

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        if agent_id not in self.seats:
            raise KeyError(f"agent {agent_id!r} is not a seat of this game {self.seats}")
        draw = random.Random(str(getattr(episode, "id_", "")))
        learner_seat = self.seats[draw.randrange(2)]
        return self.learner if agent_id == learner_seat else draw.choice(self.opponents)


def opponent_pool(
    env_name: str, env_config: Mapping[str, Any] | None = None, learner: str = LEARNER
) -> dict[str, Any]:
    """`.multi_agent()` settings: policies `learner` and `random`, the pool mapping, and
    only `learner` trained."""
    seats = _two_seats(env_name, list(agent_spaces(env_name, env_config)))
    return {
        "policies": {learner, RANDOM},
        "policy_mapping_fn": OpponentPool(seats, learner),
        "policies_to_train": [learner],
    }


def pool_modules(learner_spec: RLModuleSpec, learner: str = LEARNER) -> MultiRLModuleSpec:
    """The RLModules of the pool at the start: the learner's and the random player's."""
    return MultiRLModuleSpec(
        rl_module_specs={
            learner: learner_spec,
            RANDOM: RLModuleSpec(module_class=RandomLegalRLModule),
        }
    )


def selfplay_callback(
    win_rate_threshold: float = 0.95,
    max_snapshots: int = 10,
    evaluation_interval: int = 5,
    evaluation_games: int = 100,
) -> Callable[[], SelfPlayCallback]:
    """The callback for `.callbacks()`, its settings checked now (not inside a trial)."""
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
    )


def check_self_play(env_name: str, agents: list[str], config: Any) -> None:
    """A pool mapping must match the game's two seats, and only its learner may train."""
    mapping = config.policy_mapping_fn
    if not isinstance(mapping, OpponentPool):
        return
    if tuple(agents) != mapping.seats:
        raise UsageError(
            f"the self-play mapping seats {', '.join(mapping.seats)} but {env_name} has agents "
            f"{', '.join(agents)}; build it from the env it runs on, opponent_pool('{env_name}')"
        )
    to_train = config.policies_to_train
    if to_train is None:  # RLlib's default: every policy trains
        trained = set(config.policies)
    elif callable(to_train):
        trained = {policy for policy in config.policies if to_train(policy, None)}
    else:
        trained = set(to_train)
    if trained != {mapping.learner}:
        raise UsageError(
            f"self-play trains only '{mapping.learner}' but policies_to_train gives "
            f"{', '.join(sorted(trained)) or 'none'}; set policies_to_train=['{mapping.learner}']"
        )


def _two_seats(env_name: str, agents: list[str]) -> tuple[str, str]:
    if len(agents) != 2 or not envs.is_turn_based(env_name):
        raise UsageError(
            f"self-play needs a two-player turn-based game; {env_name} has "
            f"{len(agents)} agent(s){'' if envs.is_turn_based(env_name) else ' and is not turn-based'} "
            "(e.g. classic/connect_four)"
        )
    return agents[0], agents[1]


class SelfPlayCallback(RLlibCallback):
    """Logs the learner's win rate against the pool, grows the pool, plays evaluation games."""

    def __init__(
        self,
        win_rate_threshold: float = 0.95,
        max_snapshots: int = 10,
        evaluation_interval: int = 5,
        evaluation_games: int = 100,
    ) -> None:
        super().__init__()
        self.win_rate_threshold = win_rate_threshold
        self.max_snapshots = max_snapshots
        self.evaluation_interval = evaluation_interval
        self.evaluation_games = evaluation_games

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
        chunks = [*(prev_episode_chunks or []), episode]  # a game may span iterations
        won = sum(_agent_return(chunk, learners[0]) for chunk in chunks) > 0
        # Mean over this iteration's games only: after a snapshot joins, older games
        # against weaker opponents must not count towards the next one.
        metrics_logger.log_value(
            metrics.WIN_RATE_KEY, float(won), reduce="mean", clear_on_reduce=True
        )

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        mapping = algorithm.config.policy_mapping_fn
        if not isinstance(mapping, OpponentPool):
            return
        win_rate = lookup(result, metrics.WIN_RATE)
        if win_rate is not None and win_rate > self.win_rate_threshold:
            mapping = self._add_snapshot(algorithm, mapping)
        _put(
            result, metrics.SNAPSHOTS, _next_version(algorithm.config.policies, mapping.learner) - 1
        )
        interval, iteration = self.evaluation_interval, algorithm.iteration
        if interval and (iteration == 1 or iteration % interval == 0):  # 1: the baseline
            for name, rate in self.evaluate(algorithm, mapping.learner).items():
                _put(result, metrics.win_rate_vs(name), rate)

    def evaluate(self, algorithm: Any, learner: str) -> dict[str, float]:
        """Win rates of the learner's greedy moves against each fixed opponent."""
        config = algorithm.config
        player = module_player(algorithm.get_module(learner))
        return {
            name: play_games(
                lambda: envs.make(config.env, config.env_config),
                player,
                scripted_player(opponent),
                self.evaluation_games,
                EVALUATION_SEED,
            ).win_rate
            for name, opponent in OPPONENTS.items()
        }

    def _add_snapshot(self, algorithm: Any, mapping: OpponentPool) -> OpponentPool:
        """Freeze a copy of the learner into the pool; the random player leaves it."""
        version = _next_version(algorithm.config.policies, mapping.learner)
        snapshot = f"{mapping.learner}_v{version}"
        snapshots = [p for p in mapping.opponents if _is_snapshot(p, mapping.learner)]
        pool = (*snapshots, snapshot)[-self.max_snapshots :]
        new_mapping = replace(mapping, opponents=pool)
        algorithm.add_module(
            module_id=snapshot,
            module_spec=RLModuleSpec.from_module(algorithm.get_module(mapping.learner)),
            new_agent_to_module_mapping_fn=new_mapping,
            new_should_module_be_updated=[mapping.learner],
        )
        # The learner's weights (the env runners' copy lacks the value head), as in
        # RLlib's SelfPlayCallback: set_state also syncs them to the env runners.
        weights = algorithm.learner_group.get_weights(module_ids=[mapping.learner])
        state = {snapshot: weights[mapping.learner]}
        algorithm.set_state(
            {COMPONENT_LEARNER_GROUP: {COMPONENT_LEARNER: {COMPONENT_RL_MODULE: state}}}
        )
        return new_mapping


def _agent_return(episode: Any, agent: str) -> float:
    single = episode.agent_episodes.get(agent)
    return float(single.get_return()) if single is not None else 0.0


def _put(result: dict[str, Any], key: str, value: Any) -> None:
    *groups, leaf = key.split("/")
    for group in groups:
        result = result.setdefault(group, {})
    result[leaf] = value


def _is_snapshot(policy: str, learner: str) -> bool:
    return re.fullmatch(rf"{re.escape(learner)}_v\d+", policy) is not None


def _next_version(policies: Any, learner: str) -> int:
    versions = [int(p.rsplit("_v", 1)[1]) for p in policies if _is_snapshot(p, learner)]
    return max(versions, default=0) + 1
