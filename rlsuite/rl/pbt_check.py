"""Checks that what PBT perturbed is what the learner (and the env runners) actually use.

RLlib has had bugs where a perturbed value was silently ignored after the exploited
checkpoint was restored (the optimizer's saved learning rate won, ray issue 62173) or
mutations were dropped after restore (54755). A trial whose learner disagrees with its
config would report results for hyperparameters it never used, so after every training
iteration (an exploit is followed by one) the learner's values are compared with the
trial's config and the trial fails loudly on a mismatch. The epsilon-greedy schedule of
DQN-family configs (RLlib's DQN, the suite's QMIX) lives in the env runners' modules,
built from their model config: that is compared with the trial's `epsilon` too.
"""

from __future__ import annotations

import math
from typing import Any

from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.learner.learner import Learner
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule

from rlsuite.errors import PerturbationIgnoredError

# Learning rates of SAC-family configs (SAC, the suite's MADDPG and MASAC), by the name
# of the optimizer each one drives (RLlib's SAC learner names; rlsuite/multiagent/maddpg
# registers the same).
OPTIMIZER_LRS = {"actor_lr": "policy", "critic_lr": "qf", "alpha_lr": "alpha"}
# Config keys whose value in effect can be read back from a learner.
CHECKED_KEYS = ("lr", "entropy_coeff", "clip_param", *OPTIMIZER_LRS)


def expected_settings(config: AlgorithmConfig) -> dict[str, float]:
    """The trial's config values of CHECKED_KEYS that are plain numbers (not schedules)."""
    settings = {}
    for key in CHECKED_KEYS:
        value = getattr(config, key, None)
        if isinstance(value, int | float) and not isinstance(value, bool):
            settings[key] = float(value)
    return settings


def learner_settings(learner: Learner, _: Any = None) -> dict[str, dict[str, float]]:
    """Per module: the optimizer learning rate, entropy coefficient and clip in use."""
    settings: dict[str, dict[str, float]] = {}
    for module_id in learner.module.keys():  # noqa: SIM118 (a MultiRLModule, not a dict)
        values: dict[str, float] = {}
        optimizers = learner.get_optimizers_for_module(module_id)
        if optimizers:
            values["lr"] = float(optimizers[0][1].param_groups[0]["lr"])
        by_name = dict(optimizers)
        for key, name in OPTIMIZER_LRS.items():
            if name in by_name:
                values[key] = float(by_name[name].param_groups[0]["lr"])
        entropy = getattr(learner, "entropy_coeff_schedulers_per_module", {}).get(module_id)
        if entropy is not None:
            values["entropy_coeff"] = float(entropy.get_current_value())
        clip = getattr(learner.config.get_config_for_module(module_id), "clip_param", None)
        if clip is not None:
            values["clip_param"] = float(clip)
        settings[module_id] = values
    return settings


def mismatches(expected: dict[str, float], actual: dict[str, dict[str, float]]) -> list[str]:
    found = []
    for module_id, values in actual.items():
        for key, value in values.items():
            if key in expected and not math.isclose(value, expected[key], rel_tol=1e-6):
                found.append(f"{module_id} {key}={value:g} (config {expected[key]:g})")
    return found


def runner_epsilons(runner: Any) -> dict[str, Any]:
    """Per module of an env runner: the epsilon schedule its exploration was built with."""
    module = getattr(runner, "module", None)
    if module is None:
        return {}
    modules = module.items() if isinstance(module, MultiRLModule) else [(DEFAULT_MODULE_ID, module)]
    return {
        module_id: _plain(m.model_config["epsilon"])
        for module_id, m in modules
        if isinstance(m.model_config, dict) and "epsilon" in m.model_config
    }


def _plain(value: Any) -> Any:
    """Schedules as nested lists: Tune hands tuples back as lists."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def epsilon_mismatches(algorithm: Algorithm) -> list[str]:
    expected = getattr(algorithm.config, "epsilon", None)
    if expected is None or algorithm.env_runner_group is None:
        return []
    found = []
    for epsilons in algorithm.env_runner_group.foreach_env_runner(runner_epsilons):
        for module_id, epsilon in epsilons.items():
            if epsilon != _plain(expected):
                found.append(f"{module_id} epsilon={epsilon} (config {_plain(expected)})")
    return found


def check_learner_follows_config(*, algorithm: Algorithm, **_: Any) -> None:
    """RLlib `on_train_result` callback: raise if a learner or an env runner ignores the
    trial's config."""
    assert algorithm.config is not None and algorithm.learner_group is not None
    expected = expected_settings(algorithm.config)
    for call in algorithm.learner_group.foreach_learner(learner_settings):
        found = mismatches(expected, call.get())
        if found:
            raise PerturbationIgnoredError(
                "PBT: the learner trains with other values than the trial's config: "
                + "; ".join(found)
            )
    found = epsilon_mismatches(algorithm)
    if found:
        raise PerturbationIgnoredError(
            "PBT: the env runners explore with another epsilon schedule than the trial's config: "
            + "; ".join(found)
        )


def with_check(config: AlgorithmConfig) -> AlgorithmConfig:
    """`config` (a copy) with the check added to its `on_train_result` callbacks."""
    config = config.copy(copy_frozen=False)
    existing = config.callbacks_on_train_result
    callbacks: list[Any] = []
    if isinstance(existing, list | tuple):
        callbacks = list(existing)
    elif existing is not None:
        callbacks = [existing]
    config.callbacks(on_train_result=[*callbacks, check_learner_follows_config])
    return config
