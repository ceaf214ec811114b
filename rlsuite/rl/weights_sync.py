"""The env runners act with the learners' weights after a checkpoint is loaded into a
running Algorithm, and after the self-play league adds or restarts a module.

RLlib's env runners apply a weight sync only when its sequence number is above the one
they hold (`EnvRunner.set_state`; the number counts learner updates), and
`Algorithm.set_state`, `add_module` and `restore_from_path` sync them under the learners'
current number. That number has not moved since the iteration's own sync when a league
adds a module, and after a restore it is the checkpoint's, seldom above the runners' own.
So the runners skipped those syncs: self-play snapshots played with the random weights
they were built with, and after Tune's PBT or PB2 exploit (`Trainable.restore` ->
`Algorithm.load_checkpoint`) a trial's first iteration sampled with its own old, losing
policy while its learner trained the exploited one on that data (both checked:
tests/test_weights_sync.py). Frozen modules are never synced again, and a trained one
only after the next update. A state without a sequence number is always applied: that
is what these pushes send.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    runner_state = {COMPONENT_RL_MODULE: weights}
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
