"""The opponent pool of self-play: who plays the learner in each game, and its checks.

The pool holds frozen opponents: scripted players of `opponents.py` and snapshots of the
learner (added by `selfplay.SelfPlayCallback`). `opponents` are the members that change
(the random player at first, then the newest snapshots); `fixed` ones stay for the whole
run, like the scripted bots some leagues keep as sparring partners. `weights` make the
draw prioritized (PFSP, `selfplay.pfsp_weights`); without them it is uniform, as in
RLlib's self-play example. `win_rates` are the smoothed win rates PFSP weighs by; they
live in the mapping, not in the callback, because the mapping is part of the Algorithm's
config and so of its checkpoints: `--resume` and PBT's exploit carry them over.

`exploiters` are AlphaStar's main exploiters (Vinyals et al. 2019; RLlib's
`self_play_league_based_with_open_spiel.py` has them too): policies that train beside the
learner and play only against it, in `exploiter_share` of the games, so they learn its
weaknesses and it learns from being beaten through them. They are not pool members:
PFSP does not weigh them and their games do not count towards snapshots.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite import envs
from rlsuite.errors import UsageError
from rlsuite.multiagent.opponents import CONNECT_FOUR_PLAYERS, SCRIPTED_MODULES, plays_connect_four
from rlsuite.multiagent.policies import agent_spaces

LEARNER = "main"
RANDOM = "random"


@dataclass(frozen=True)
class OpponentPool:
    """The policy mapping: in each episode the learner takes one seat (the first in about
    half of the episodes) and an opponent drawn from the pool the other, uniformly or by
    `weights` (one per member of `members`), or, in `exploiter_share` of the episodes, one
    of the `exploiters`. The draws are seeded by the episode id, so the two agents of an
    episode agree."""

    seats: tuple[str, str]
    learner: str = LEARNER
    opponents: tuple[str, ...] = (RANDOM,)
    fixed: tuple[str, ...] = ()
    weights: tuple[float, ...] = ()
    exploiters: tuple[str, ...] = ()
    exploiter_share: float = 0.0
    win_rates: tuple[tuple[str, float], ...] = ()  # (member, smoothed rate): PFSP's input

    @property
    def members(self) -> tuple[str, ...]:
        return (*self.opponents, *self.fixed)

    @property
    def trained(self) -> list[str]:
        """The policies that learn: the learner and the exploiters."""
        return [self.learner, *self.exploiters]

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        if agent_id not in self.seats:
            raise KeyError(f"agent {agent_id!r} is not a seat of this game {self.seats}")
        draw = random.Random(str(getattr(episode, "id_", "")))
        learner_seat = self.seats[draw.randrange(2)]
        if agent_id == learner_seat:
            return self.learner
        # Drawn only when there are exploiters, so pools without them keep their draws.
        if self.exploiters and draw.random() < self.exploiter_share:
            return draw.choice(self.exploiters)
        if self.weights:
            return draw.choices(self.members, weights=self.weights)[0]
        return draw.choice(self.members)


def opponent_pool(
    env_name: str,
    env_config: Mapping[str, Any] | None = None,
    learner: str = LEARNER,
    fixed: tuple[str, ...] = (),
    exploiters: tuple[str, ...] = (),
    exploiter_share: float = 0.5,
) -> dict[str, Any]:
    """`.multi_agent()` settings: policies `learner`, `random`, the `fixed` scripted
    players and the `exploiters`, the pool mapping, and `learner` and the exploiters
    trained (the exploiters against the learner in `exploiter_share` of the games)."""
    spaces = agent_spaces(env_name, env_config)
    seats = _two_seats(env_name, list(spaces))
    for name in fixed:
        _scripted(name)
    _check_players_know_the_game(env_name, fixed, spaces[seats[0]])
    _check_exploiters(learner, fixed, exploiters, exploiter_share)
    mapping = OpponentPool(seats, learner, fixed=tuple(fixed))
    if exploiters:
        mapping = replace(mapping, exploiters=tuple(exploiters), exploiter_share=exploiter_share)
    return {
        "policies": {learner, RANDOM, *fixed, *exploiters},
        "policy_mapping_fn": mapping,
        "policies_to_train": [learner, *exploiters],
    }


def pool_modules(
    learner_spec: RLModuleSpec,
    learner: str = LEARNER,
    fixed: tuple[str, ...] = (),
    exploiters: tuple[str, ...] = (),
) -> MultiRLModuleSpec:
    """The RLModules of the pool at the start: the learner's, the random player's, those
    of the `fixed` scripted players, and for each exploiter a fresh one like the learner's."""
    scripted = {name: RLModuleSpec(module_class=_scripted(name)) for name in (RANDOM, *fixed)}
    trained = {learner: learner_spec, **{name: copy.deepcopy(learner_spec) for name in exploiters}}
    return MultiRLModuleSpec(rl_module_specs={**trained, **scripted})


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
    expected = mapping.trained
    if trained != set(expected):
        names = ", ".join(f"'{name}'" for name in expected)
        raise UsageError(
            f"self-play trains only {names} but policies_to_train gives "
            f"{', '.join(sorted(trained)) or 'none'}; set policies_to_train=[{names}]"
        )


def is_copy(policy: str, of: str) -> bool:
    """Whether `policy` is the name of a frozen copy of `of` (`main_v3` of `main`)."""
    return re.fullmatch(rf"{re.escape(of)}_v\d+", policy) is not None


def _scripted(name: str) -> type:
    if name not in SCRIPTED_MODULES:
        raise UsageError(
            f"no scripted player {name!r} for the pool; choose from {', '.join(SCRIPTED_MODULES)}"
        )
    return SCRIPTED_MODULES[name]


def _check_players_know_the_game(env_name: str, fixed: tuple[str, ...], seat: Any) -> None:
    unknown = [name for name in fixed if name in CONNECT_FOUR_PLAYERS]
    if unknown and not plays_connect_four(seat.observation, seat.action):
        raise UsageError(
            f"the scripted {unknown[0]!r} player plays connect four only, and {env_name} is "
            f"another game; leave it out of fixed=: the pool keeps the random player and the "
            "learner's snapshots"
        )


def _check_exploiters(
    learner: str, fixed: tuple[str, ...], exploiters: tuple[str, ...], share: float
) -> None:
    taken = {learner, RANDOM, *fixed}
    clashes = [
        name
        for name in exploiters
        if name in taken
        or exploiters.count(name) > 1
        or any(is_copy(name, of) for of in (learner, *exploiters))
    ]
    if clashes:
        raise UsageError(
            f"exploiter name {clashes[0]!r} is taken by another policy of the pool; "
            f"name each exploiter once, e.g. '{learner}_exploiter'"
        )
    if exploiters and not 0 < share < 1:
        raise UsageError(
            f"exploiter_share={share}: the share of games the exploiters play must lie in (0, 1)"
        )


def _two_seats(env_name: str, agents: list[str]) -> tuple[str, str]:
    if len(agents) != 2 or not envs.is_turn_based(env_name):
        raise UsageError(
            f"self-play needs a two-player turn-based game; {env_name} has "
            f"{len(agents)} agent(s){'' if envs.is_turn_based(env_name) else ' and is not turn-based'} "
            "(e.g. classic/connect_four)"
        )
    return agents[0], agents[1]
