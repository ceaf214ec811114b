"""Checks of an RLlib config that must pass before Ray starts (UsageError if not)."""

from __future__ import annotations

import logging

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

from rlsuite import envs
from rlsuite.errors import UsageError


def check_env(config: AlgorithmConfig) -> None:
    if config.env is None:
        raise UsageError(
            "the experiment sets no env; add .environment('family/name') to its config"
        )
    if isinstance(config.env, str):
        try:
            envs.creator(config.env)
        except envs.UnknownEnvError as error:
            raise UsageError(str(error)) from None


def check_config(config: AlgorithmConfig) -> None:
    """RLlib's own validation of the config, run here rather than inside the first trial."""
    # validate() logs RLlib's "running on the new API stack" notice; on bad input the user
    # must see one line only.
    rllib_logger = logging.getLogger("ray.rllib.algorithms.algorithm_config")
    level = rllib_logger.level
    rllib_logger.setLevel(logging.ERROR)
    try:
        config.copy(copy_frozen=False).validate()
    except ValueError as error:
        reason = str(error).strip().splitlines()[0]
        raise UsageError(
            f"invalid RLlib config: {reason} (fix it with --set or in the experiment file)"
        ) from None
    finally:
        rllib_logger.setLevel(level)


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
