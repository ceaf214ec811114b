"""The one place that tells which kind of experiment a config is (`rlsuite.workload`)."""

from __future__ import annotations

from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

from rlsuite.errors import UsageError
from rlsuite.rl.workload import RLWorkload
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.workload import SupervisedWorkload
from rlsuite.workload import Workload

# Config type -> its workload. A new kind of experiment is one line here.
KINDS: tuple[tuple[type, Workload], ...] = (
    (AlgorithmConfig, RLWorkload()),
    (SupervisedConfig, SupervisedWorkload()),
)


def workload_for(config: Any) -> Workload:
    """The workload that runs `config`; UsageError for a config of no known kind."""
    for config_type, workload in KINDS:
        if isinstance(config, config_type):
            return workload
    raise UsageError(
        f"Experiment.config is a {type(config).__name__}; give it an RLlib AlgorithmConfig "
        "(PPOConfig(), ...) or an rlsuite.supervised.SupervisedConfig"
    )
