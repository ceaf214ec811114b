"""Checks of an RLlib config that must pass before Ray starts (UsageError if not)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any, NoReturn

import gymnasium as gym
import numpy as np
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite import envs, metrics
from rlsuite.errors import EnvFailed, UsageError
from rlsuite.rl.module_build import build_failure

_UNEXPECTED_KEY = re.compile(r"unexpected keyword argument '(\w+)'")
Spaces = tuple[Any, Any]
"""An env's observation and action spaces."""


def check_env(config: AlgorithmConfig) -> Spaces:
    """The env resolves as RLlib resolves it (a registry name, a `register_env` name, a
    Gymnasium id or an env class) and builds with the config's `env_config`. Returns one
    env's observation and action spaces (a vector env's single ones), which
    `check_module_builds` builds the module from, so the env is built once."""
    if config.env is None:
        raise UsageError(
            "the experiment sets no env; add .environment('family/name') to its config"
        )
    try:
        create = envs.creator(config.env)
    except envs.UnknownEnvError as error:
        raise UsageError(str(error)) from None
    env = _build(create, config)
    try:
        check_frames(config, env)
        return (  # a multi-agent env's are per agent (its modules' check builds them)
            getattr(env, "single_observation_space", getattr(env, "observation_space", None)),
            getattr(env, "single_action_space", getattr(env, "action_space", None)),
        )
    finally:
        env.close()


def check_module_builds(config: AlgorithmConfig, spaces: Spaces) -> None:
    """Build a single-agent config's RLModule as the env runners will, from the env's
    spaces (`check_env`'s): a model config it cannot take (`fcnet_activation="gelu"`,
    filters that do not fit the frames) would otherwise fail inside the trial with a long
    traceback. Last of the checks, so that the more precise refusals come first
    (multi-agent configs build every policy's in `check_modules_build`)."""
    if config.env is None or config.is_multi_agent or config._env_to_module_connector:
        return  # a connector (private: RLlib has no getter) may change the observations
    if None in spaces:
        return  # an env without spaces: RLlib's env runner says so in its own words
    try:  # as the env runners ask for it (SingleAgentEnvRunner.make_module)
        spec = config.get_rl_module_spec(spaces={DEFAULT_MODULE_ID: spaces}, inference_only=True)
    except NotImplementedError:
        return  # an algorithm without a default module: RLlib will say so
    reason = build_failure(spec)
    if reason is not None:
        raise UsageError(
            f"no RLModule for env {envs.display_name(config.env)}: {reason} (fix the model "
            "config, .rl_module(model_config=...) or --set rl_module.model_config...)"
        )


def check_frames(config: AlgorithmConfig, env: Any) -> None:
    """uint8 image observations need a module that scales them: RLlib's default CNN
    refuses uint8 input, which would fail in the first trial's first forward pass."""
    space = getattr(env, "single_observation_space", getattr(env, "observation_space", None))
    if not isinstance(space, gym.spaces.Box) or config.is_multi_agent:
        return
    if len(space.shape) != 3 or space.dtype != np.uint8:
        return
    from rlsuite.rl.frames import takes_uint8_frames

    try:
        module_class = getattr(config.rl_module_spec, "module_class", None)
    except NotImplementedError:  # an algorithm without a default module: RLlib will say
        return
    if module_class is None or takes_uint8_frames(module_class):
        return
    raise UsageError(
        f"env {envs.display_name(config.env)} gives uint8 frames, which RLlib's "
        f"{module_class.__name__} feeds to its CNN unscaled; use "
        "config.rl_module(rl_module_spec=RLModuleSpec(module_class=...)) with a module of "
        "rlsuite.rl.frames (or, for atari/* envs, env_config frame_dtype='float32')"
    )


def _build(create: Any, config: AlgorithmConfig) -> Any:
    try:
        return create(config.env_config)
    except Exception as error:
        raise_env_failure(
            error,
            envs.display_name(config.env),
            "; remove it from .environment(env_config=...) or --set environment.env_config",
        )


def raise_env_failure(error: Exception, name: str, key_fix: str = "") -> NoReturn:
    """An env failed while built (before Ray, or in `rlsuite.evaluate`): a bad
    `env_config` is said in one line; the suite's own wrappers' refusals (TeamEnv,
    JointEnv) stand as they are; anything else is the user's env's own error, said as
    such (`EnvFailed`: its traceback, then one line)."""
    if isinstance(error, UsageError):
        raise error
    if isinstance(error, envs.EnvConfigError):
        raise UsageError(f"env {name}: {error}") from None
    key = unexpected_key(error)
    if key is None:
        raise EnvFailed(f"env {name} raised while it was built") from error
    raise UsageError(
        f"env {name} does not take env_config key '{key}' ({error}){key_fix}"
    ) from None


def unexpected_key(error: Exception) -> str | None:
    """The keyword an env's constructor refused (gymnasium passes env_config as keywords)."""
    found = _UNEXPECTED_KEY.search(str(error)) if isinstance(error, TypeError) else None
    return found.group(1) if found else None


def check_config(config: AlgorithmConfig) -> None:
    """RLlib's own validation of the config, run here rather than inside the first trial."""
    # validate() logs RLlib's "running on the new API stack" notice; on bad input the user
    # must see one line only.
    rllib_logger = logging.getLogger("ray.rllib.algorithms.algorithm_config")
    level = rllib_logger.level
    rllib_logger.setLevel(logging.ERROR)
    try:
        config.copy(copy_frozen=False).validate()
    except (ValueError, TypeError) as error:  # RLlib's own checks raise both
        reason = str(error).strip().splitlines()[0]
        raise UsageError(
            f"invalid RLlib config: {reason} (fix it with --set or in the experiment file)"
        ) from None
    finally:
        rllib_logger.setLevel(level)


def check_scaling(config: AlgorithmConfig) -> None:
    """Scaling settings that cannot run together (RLlib would start and then stall)."""
    aggregators = getattr(config, "num_aggregator_actors_per_learner", 0) or 0
    if aggregators > 0 and config.num_env_runners == 0:
        raise UsageError(
            f"{aggregators} aggregator actor(s) per learner but no env runners to feed them; "
            "set --num-env-runners 1 or more, or learners.num_aggregator_actors_per_learner=0"
        )


def requested_gpus(config: AlgorithmConfig) -> float:
    learners = config.num_learners * config.num_gpus_per_learner
    local_learner = config.num_gpus_per_learner if config.num_learners == 0 else 0
    runners = config.num_env_runners * config.num_gpus_per_env_runner
    return learners + local_learner + runners


def check_gpus(config: AlgorithmConfig, address: str | None) -> None:
    """Without a cluster, GPUs asked for must exist on this machine."""
    wanted = requested_gpus(config)
    if address or wanted == 0:
        return
    import torch

    available = torch.cuda.device_count()
    if wanted > available:
        raise UsageError(
            f"the run asks for {wanted:g} GPU(s) but this machine has {available}; "
            "set --num-gpus-per-learner 0, use --smoke, or join a GPU cluster with --address"
        )


def check_evaluation_results(config: AlgorithmConfig, stop: Iterable[str], metric: str) -> None:
    """A stop criterion or metric on RLlib's evaluation results needs evaluation turned on:
    without `evaluation_interval` RLlib reports none, and Tune only warns in its log that
    the stop key is missing, so the run would never stop on it."""
    wanted = [key for key in [*stop, metric] if key.startswith(f"{metrics.EVALUATION_RESULTS}/")]
    if wanted and not config.evaluation_interval:
        raise UsageError(
            f"{wanted[0]} needs evaluation results, which this config does not make: add "
            ".evaluation(evaluation_interval=N) to it (or --set evaluation.evaluation_interval=N), "
            "or stop on another metric"
        )
