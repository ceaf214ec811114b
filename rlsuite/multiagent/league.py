"""The league as it changes during a run: frozen copies of trained policies joining the
pool, and AlphaStar's renewal of main exploiters.

A frozen copy is a new RLModule added with `Algorithm.add_module`, as in RLlib's
`SelfPlayCallback` and its league example (`self_play_league_based_callback.py`), and
given the trained policy's weights in the learners and on every env runner (not with
`Algorithm.set_state`, as those examples do: `rlsuite/rl/weights_sync.py` says why).
Copies of `main` are named `main_v1`, `main_v2`, ...; of an exploiter `<exploiter>_v1`, ...

Renewing an exploiter (AlphaStar, Vinyals et al. 2019: a main exploiter that beats the
main agent in over 70% of its games is frozen into the league and reset): its frozen copy
joins the pool's fixed members for the rest of the run, so the learner keeps playing the
weakness it found, and the exploiter starts again from a fresh module and optimizer,
to look for another. RLlib's league example freezes copies of its exploiters too, but
never resets them. A reset is `Algorithm.remove_module` and `add_module` under the same
name: RLlib's own way to drop a module's optimizer state (and PPO's KL coefficient)
along with its weights.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite import metrics
from rlsuite.multiagent.pool import OpponentPool, is_copy
from rlsuite.results import lookup
from rlsuite.rl.weights_sync import push_weights


def copies_made(policies: Any, of: str) -> int:
    """How many frozen copies of `of` there are (the highest version)."""
    versions = [int(p.rsplit("_v", 1)[1]) for p in policies if is_copy(p, of)]
    return max(versions, default=0)


def next_copy_name(algorithm: Any, source: str) -> str:
    return f"{source}_v{copies_made(algorithm.config.policies, source) + 1}"


def add_frozen_copy(algorithm: Any, source: str, name: str, new_mapping: OpponentPool) -> None:
    """Add `name`, a frozen copy of `source` (its learner weights), played by `new_mapping`."""
    algorithm.add_module(
        module_id=name,
        module_spec=RLModuleSpec.from_module(algorithm.get_module(source)),
        new_agent_to_module_mapping_fn=new_mapping,
        new_should_module_be_updated=new_mapping.trained,
    )
    # The learner's weights: the env runners' copy of `source` lacks the value head.
    _copy_weights(algorithm, {name: source})


def exploiters_to_renew(mapping: OpponentPool, result: dict, below: float) -> list[str]:
    """The exploiters against which the learner won less than `below` of this iteration's
    games (none where they played no game)."""
    rates = lookup(result, metrics.POOL_WIN_RATES) or {}
    renew = []
    for name in mapping.exploiters:
        rate = rates.get(name)
        # RLlib reports a numpy float, and NaN for a key cleared without games.
        if rate is not None and math.isfinite(float(rate)) and float(rate) < below:
            renew.append(name)
    return renew


def renew_exploiter(
    algorithm: Any, mapping: OpponentPool, exploiter: str, keep: int
) -> OpponentPool:
    """Freeze a copy of `exploiter` into the pool's fixed members, the newest `keep` of its
    copies staying there (older ones stay in the Algorithm, unplayed, as old snapshots of
    the learner do), and restart it from a fresh module; returns the new mapping, the copy
    last in `fixed` (PFSP's weights dropped: the members changed)."""
    frozen = next_copy_name(algorithm, exploiter)
    others = tuple(p for p in mapping.fixed if not is_copy(p, exploiter))
    copies = tuple(p for p in mapping.fixed if is_copy(p, exploiter))
    new_mapping = replace(mapping, fixed=(*others, *(*copies, frozen)[-keep:]), weights=())
    add_frozen_copy(algorithm, exploiter, frozen, new_mapping)
    spec = RLModuleSpec.from_module(algorithm.get_module(exploiter))
    overrides = algorithm.config.algorithm_config_overrides_per_module.get(exploiter)
    # RLlib's remove_module resets the env runners' episodes, so every unfinished game
    # of this iteration's sampling is dropped (as when RLlib's league examples remove one).
    algorithm.remove_module(
        module_id=exploiter,
        new_agent_to_module_mapping_fn=new_mapping,
        new_should_module_be_updated=[p for p in new_mapping.trained if p != exploiter],
    )
    algorithm.add_module(
        module_id=exploiter,
        module_spec=spec,
        config_overrides=overrides,  # remove_module dropped the exploiter's own settings
        new_agent_to_module_mapping_fn=new_mapping,
        new_should_module_be_updated=new_mapping.trained,
    )
    # The env runners built their own fresh module: give them the learner's.
    push_weights(algorithm, {exploiter: exploiter})
    return new_mapping


def _copy_weights(algorithm: Any, sources: dict[str, str]) -> None:
    """Set each module of `sources` to its source module's learner weights, in the
    learners and on every env runner (not with `Algorithm.set_state`, whose sync the env
    runners skip: `rlsuite/rl/weights_sync.py`)."""
    weights = algorithm.learner_group.get_weights(module_ids=sorted(set(sources.values())))
    state = {target: weights[source] for target, source in sources.items()}
    algorithm.learner_group.set_state({COMPONENT_LEARNER: {COMPONENT_RL_MODULE: state}})
    push_weights(algorithm, sources)


def set_mapping(algorithm: Any, mapping: OpponentPool) -> None:
    """The new mapping for the Algorithm's config (its checkpoints) and its env runners, the
    way `Algorithm.add_module` hands over a new mapping."""
    algorithm.config._is_frozen = False
    algorithm.config.multi_agent(policy_mapping_fn=mapping)
    algorithm.config.freeze()
    algorithm.env_runner_group.foreach_env_runner(
        lambda runner: runner.config.multi_agent(policy_mapping_fn=mapping)
    )
