"""The opponent pool of self-play: who plays the learner in each game, and its checks.

The pool holds frozen opponents: scripted players of `opponents.py` and snapshots of the
learner (added by `selfplay.SelfPlayCallback`). `opponents` are the members that change
(the random player at first, then the newest snapshots); `fixed` ones stay for the whole
run, like the scripted bots some leagues keep as sparring partners. `weights` make the
draw prioritized (PFSP, `selfplay.pfsp_weights`); without them it is uniform, as in
RLlib's self-play example.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite import envs
from rlsuite.errors import UsageError
from rlsuite.multiagent.opponents import SCRIPTED_MODULES
from rlsuite.multiagent.policies import agent_spaces

LEARNER = "main"
RANDOM = "random"


@dataclass(frozen=True)
class OpponentPool:
    """The policy mapping: in each episode the learner takes one seat (the first in about
    half of the episodes) and an opponent drawn from the pool the other, uniformly or by
    `weights` (one per member of `members`). Both draws are seeded by the episode id, so
    the two agents of an episode agree."""

    seats: tuple[str, str]
    learner: str = LEARNER
    opponents: tuple[str, ...] = (RANDOM,)
    fixed: tuple[str, ...] = ()
    weights: tuple[float, ...] = ()

    @property
    def members(self) -> tuple[str, ...]:
        return (*self.opponents, *self.fixed)

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        if agent_id not in self.seats:
            raise KeyError(f"agent {agent_id!r} is not a seat of this game {self.seats}")
        draw = random.Random(str(getattr(episode, "id_", "")))
        learner_seat = self.seats[draw.randrange(2)]
        if agent_id == learner_seat:
            return self.learner
        if self.weights:
            return draw.choices(self.members, weights=self.weights)[0]
        return draw.choice(self.members)


def opponent_pool(
    env_name: str,
    env_config: Mapping[str, Any] | None = None,
    learner: str = LEARNER,
    fixed: tuple[str, ...] = (),
) -> dict[str, Any]:
    """`.multi_agent()` settings: policies `learner`, `random` and the `fixed` scripted
    players, the pool mapping, and only `learner` trained."""
    seats = _two_seats(env_name, list(agent_spaces(env_name, env_config)))
    for name in fixed:
        _scripted(name)
    return {
        "policies": {learner, RANDOM, *fixed},
        "policy_mapping_fn": OpponentPool(seats, learner, fixed=tuple(fixed)),
        "policies_to_train": [learner],
    }


def pool_modules(
    learner_spec: RLModuleSpec, learner: str = LEARNER, fixed: tuple[str, ...] = ()
) -> MultiRLModuleSpec:
    """The RLModules of the pool at the start: the learner's, the random player's and
    those of the `fixed` scripted players."""
    scripted = {name: RLModuleSpec(module_class=_scripted(name)) for name in (RANDOM, *fixed)}
    return MultiRLModuleSpec(rl_module_specs={learner: learner_spec, **scripted})


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


def _scripted(name: str) -> type:
    if name not in SCRIPTED_MODULES:
        raise UsageError(
            f"no scripted player {name!r} for the pool; choose from {', '.join(SCRIPTED_MODULES)}"
        )
    return SCRIPTED_MODULES[name]


def _two_seats(env_name: str, agents: list[str]) -> tuple[str, str]:
    if len(agents) != 2 or not envs.is_turn_based(env_name):
        raise UsageError(
            f"self-play needs a two-player turn-based game; {env_name} has "
            f"{len(agents)} agent(s){'' if envs.is_turn_based(env_name) else ' and is not turn-based'} "
            "(e.g. classic/connect_four)"
        )
    return agents[0], agents[1]
