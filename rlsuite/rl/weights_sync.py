"""The env runners act with the learners' weights after the self-play league adds or
restarts a module, and after a checkpoint is loaded into an Algorithm that has trained.

RLlib's env runners apply a weight sync only when its sequence number is above the one
they hold (`EnvRunner.set_state`; the number counts learner updates), and
`Algorithm.set_state`, `add_module` and `restore_from_path` sync them under the learners'
current number. When a league adds a module that number has not moved since the
iteration's own sync, so the runners skipped it and self-play snapshots played with the
random weights they were built with (tests/test_selfplay.py); frozen modules are never
synced again. After `Algorithm.load_checkpoint` into an Algorithm that has trained the
number is the checkpoint's, seldom above the runners' own, so they keep acting with the
old weights until the next update (tests/test_weights_sync.py). The launcher's own
restores do not hit that: Tune's PBT and PB2 restore an exploit into a new actor (Tune's
`reuse_actors` is off, and RLlib's Algorithm has no `reset_config`), whose runners start
at number 0 and take any sync. The push after a restore is a safeguard for restores into
a live Algorithm (a callback's or a script's `load_checkpoint`). A state without a
sequence number is always applied: that is what these pushes send.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ray
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE
from ray.rllib.utils import force_list


def push_weights(algorithm: Any, sources: Mapping[str, str] | None = None) -> None:
    """Set every env runner's modules to the learners' weights: each module of `sources`
    to the weights of its source module, or, without `sources`, every module to its own."""
    component = f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}"
    components = (
        [f"{component}/{m}" for m in sorted(set(sources.values()))] if sources else [component]
    )
    # The env runners hold inference-only modules (PPO's, for one, without the value head).
    state = algorithm.learner_group.get_state(components=components, inference_only=True)
    weights = state[COMPONENT_LEARNER][COMPONENT_RL_MODULE]
    if sources:
        weights = {target: weights[source] for target, source in sources.items()}
    runner_state = {COMPONENT_RL_MODULE: ray.put(weights)}  # one copy for all runners
    for group in (algorithm.env_runner_group, algorithm.eval_env_runner_group):
        if group is not None:
            group.foreach_env_runner(
                lambda runner: runner.set_state(runner_state), local_env_runner=True
            )


def push_weights_after_restore(*, algorithm: Any, **_: Any) -> None:
    """RLlib `on_checkpoint_loaded` callback: the env runners act with the restored weights."""
    push_weights(algorithm)


def with_weights_pushed_after_restore(config: AlgorithmConfig) -> AlgorithmConfig:
    """`config` with `push_weights_after_restore` after the user's own
    `on_checkpoint_loaded` callbacks."""
    own = [
        c
        for c in force_list(config.callbacks_on_checkpoint_loaded)
        if c is not push_weights_after_restore
    ]
    config.callbacks(on_checkpoint_loaded=[*own, push_weights_after_restore])
    return config
