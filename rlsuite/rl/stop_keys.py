"""Stop criteria an RL run would never reach because it never reports their key.

Tune only logs a warning when a stop key is missing from a result ("the run will continue
until training is finished"), and `--stop` replaces every other stop, so such a run would
train until someone stops it. Each case the config shows before Ray starts is refused here:
a supervised result, a self-play result without the self-play callback, a policy the config
does not have, an agent the env does not have.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

from rlsuite import envs, metrics
from rlsuite.errors import UsageError
from rlsuite.multiagent.policies import SHARED

SELFPLAY_KEYS = frozenset(
    {
        metrics.WIN_RATE,
        metrics.SNAPSHOTS,
        metrics.WIN_RATE_VS_RANDOM,
        metrics.WIN_RATE_VS_HEURISTIC,
        metrics.WIN_RATE_VS_CAREFUL,
    }
)
# Measured in whole games every `evaluation_interval` iterations (0: never).
FIXED_OPPONENT_KEYS = SELFPLAY_KEYS - {metrics.WIN_RATE, metrics.SNAPSHOTS}


def check_stop_keys(config: AlgorithmConfig, stop: Iterable[str]) -> None:
    """UsageError, one line, for the first stop key this RL config never reports."""
    for key in stop:
        if key in metrics.SUPERVISED_METRICS:
            raise UsageError(
                f"stop {metrics.short_name(key)}: a supervised result, which an RL run does not report; stop on "
                "episode_return_mean, env_steps, training_iteration or time_total_s"
            )
        if key in SELFPLAY_KEYS:
            _check_selfplay_key(config, key)
        _check_id(config, key)


def _check_selfplay_key(config: AlgorithmConfig, key: str) -> None:
    settings = _selfplay_settings(config)
    if settings is None:
        raise UsageError(
            f"stop {metrics.short_name(key)}: a self-play result, and this config has no self-play callback "
            "(rlsuite.multiagent.selfplay_callback); stop on episode_return_mean or env_steps"
        )
    if key in FIXED_OPPONENT_KEYS and settings.get("evaluation_interval", 5) == 0:
        raise UsageError(
            f"stop {metrics.short_name(key)}: the self-play callback's evaluation_interval is 0, so it never "
            "plays the fixed opponents; give it evaluation_interval=N or stop on win_rate"
        )


def _selfplay_settings(config: AlgorithmConfig) -> dict[str, Any] | None:
    """The keywords of the config's SelfPlayCallback (`selfplay_callback`'s partial), or
    None when the config has none."""
    from rlsuite.multiagent.selfplay import SelfPlayCallback

    callbacks: Any = config.callbacks_class
    for callback in callbacks if isinstance(callbacks, list | tuple) else [callbacks]:
        if isinstance(callback, functools.partial):
            target, keywords = callback.func, dict(callback.keywords)
        else:
            target, keywords = callback, {}
        if isinstance(target, type) and issubclass(target, SelfPlayCallback):
            return keywords
    return None


def _check_id(config: AlgorithmConfig, key: str) -> None:
    """`policy_return_mean/<id>` and `agent_return_mean/<id>` name a policy or agent the
    run has. A custom env's agents, and MADDPG's (logged by its own callback), are not
    known before the env is built: those pass. Empty: a single-agent run."""
    prefix, _, some_id = key.rpartition("/")
    if prefix == metrics.POLICY_RETURN_MEAN_PREFIX:
        known = _policies(config)
        kind, fix = "policy", "policy_return_mean/<policy id>"
    elif prefix == metrics.AGENT_RETURN_MEAN_PREFIX:
        known = _agents(config)
        kind, fix = "agent", "agent_return_mean/<agent id>"
    else:
        return
    if known is not None and not known:
        raise UsageError(
            f"stop {metrics.short_name(key)}: RLlib runs this config as one agent (a single-agent env, or a "
            f"QMIX/VDN team), and reports no per-{kind} returns then; stop on "
            "episode_return_mean"
        )
    if known is not None and some_id not in known:
        raise UsageError(
            f"stop {metrics.short_name(key)}: this run has no {kind} '{some_id}', so it never reports that "
            f"return; its {kind} ids: {', '.join(sorted(known))} ({fix})"
        )


def _policies(config: AlgorithmConfig) -> set[str] | None:
    if _selfplay_settings(config) is not None:
        return None  # the callback adds frozen copies (main_v1, ...) as the run goes
    agent_policies = getattr(config, "agent_policies", None)  # MADDPG and MASAC
    if hasattr(config, "agent_policies"):
        return set(agent_policies or [SHARED])  # MADDPG's default: one shared policy
    # A single-agent env runner logs its return under singular keys of its own
    # ("module_episode_return_mean"), never under the multi-agent ones these stops name.
    return set(config.policies) if config.is_multi_agent else set()


def _agents(config: AlgorithmConfig) -> set[str] | None:
    if hasattr(config, "agent_policies"):
        return None
    if not config.is_multi_agent:
        return set()
    env = config.env
    if isinstance(env, str) and envs.is_registered(env):
        from rlsuite.multiagent.policies import agent_spaces

        return set(agent_spaces(env, config.env_config))
    return None
