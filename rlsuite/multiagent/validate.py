"""Checks of a multi-agent config that must pass before Ray starts (UsageError if not)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

from rlsuite import envs
from rlsuite.errors import UsageError
from rlsuite.multiagent.centralized_critic import check_centralized_critic
from rlsuite.multiagent.policies import AgentSpaces, agent_spaces, check_mapping
from rlsuite.multiagent.selfplay import check_self_play
from rlsuite.rl.module_build import build_failure

MASKING_MODULE = (
    "ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule"
)


def check_multi_agent(config: AlgorithmConfig) -> None:
    """A multi-agent env gets policies for every agent, spaces matching within each policy,
    and masking modules where its observations carry action masks; a single-agent env gets
    no multi-agent policies. Call after `validate.check_env`."""
    env: Any = config.env  # a name or an env class: `validate.check_env` resolved it
    if env is None:
        return
    if not envs.is_multi_agent(env, config.env_config):
        if config.is_multi_agent:
            raise UsageError(
                f"{env} is a single-agent env but the config sets multi-agent policies "
                f"({', '.join(sorted(config.policies))}); remove .multi_agent(...)"
            )
        return
    if not config.is_multi_agent:
        raise UsageError(
            f"{env} is a multi-agent env but the config has no policy mapping; add "
            f".multi_agent(**rlsuite.multiagent.shared('{env}')) (or independent, by_type)"
        )
    agents = agent_spaces(env, config.env_config)
    check_self_play(env, list(agents), config)
    check_mapping(env, agents, set(config.policies), config.policy_mapping_fn)
    check_action_masking(env, agents, config)
    check_centralized_critic(env, agents, config)
    check_modules_build(env, config)


def check_action_masking(
    env_name: str, agents: Mapping[str, AgentSpaces], config: AlgorithmConfig
) -> None:
    """Agents whose observations carry an `action_mask` (turn-based games, where an illegal
    move ends the game) need RLModules that apply it: RLlib's ActionMaskingRLModule."""
    if not any(_has_action_mask(spaces.observation) for spaces in agents.values()):
        return
    for policy in sorted(config.policies):
        if not _applies_masks(_module_class(config, policy)):
            raise UsageError(
                f"{env_name} has action masks (an illegal move ends the game) but policy "
                f"'{policy}' does not apply them; give it RLModuleSpec(module_class="
                f"{MASKING_MODULE}) in .rl_module(rl_module_spec=...)"
            )


def check_modules_build(env_name: str, config: AlgorithmConfig) -> None:
    """Build every policy's RLModule as RLlib will, from the env's spaces: a model config
    that does not fit the observations (a board RLlib has no default CNN for, say) would
    otherwise fail inside the trial with a long traceback."""
    env: Any = envs.make(env_name, config.env_config)
    try:
        specs = config.get_multi_rl_module_spec(env=env).rl_module_specs or {}
        for policy, module_spec in specs.items():
            reason = build_failure(module_spec)
            if reason is not None:
                raise UsageError(
                    f"policy '{policy}' gets no RLModule for {env_name}: {reason} (fix its "
                    "model config, .rl_module(model_config=...), or its RLModuleSpec)"
                )
    finally:
        env.close()


def _applies_masks(module_class: Any) -> bool:
    # By name along the MRO rather than issubclass: importing RLlib's example module
    # logs a deprecation warning, which would add a second line to a one-line error.
    # Scripted players (rlsuite.multiagent.opponents) read the mask themselves.
    return isinstance(module_class, type) and (
        any(cls.__name__ == "ActionMaskingRLModule" for cls in module_class.__mro__)
        or getattr(module_class, "applies_action_mask", False) is True
    )


def _has_action_mask(space: gym.Space) -> bool:
    return isinstance(space, gym.spaces.Dict) and "action_mask" in space.spaces


def _module_class(config: AlgorithmConfig, policy: str) -> Any:
    """The RLModule class `policy` will get: from a MultiRLModuleSpec's entry for it, a
    single RLModuleSpec for all, or None (RLlib's default module, which knows no masks)."""
    spec: Any = config._rl_module_spec
    specs = getattr(spec, "rl_module_specs", None)
    if isinstance(specs, Mapping):
        spec = specs.get(policy)
    elif specs is not None:
        spec = specs
    return getattr(spec, "module_class", None)
