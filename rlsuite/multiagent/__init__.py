"""Multi-agent helpers: policy mappings for `AlgorithmConfig.multi_agent()` and their checks,
MAPPO's centralized critic (`mappo(config)`), and QMIX/VDN (`QMIXConfig`, `grouped`)."""

from rlsuite.multiagent.centralized_critic import CentralizedCriticPPOModule, mappo
from rlsuite.multiagent.policies import (
    SHARED,
    MultiAgentSettings,
    agent_type,
    by_type,
    independent,
    shared,
    table,
)
from rlsuite.multiagent.qmix import QMIXConfig, grouped
from rlsuite.multiagent.validate import check_multi_agent

__all__ = [
    "SHARED",
    "CentralizedCriticPPOModule",
    "MultiAgentSettings",
    "QMIXConfig",
    "agent_type",
    "by_type",
    "check_multi_agent",
    "grouped",
    "independent",
    "mappo",
    "shared",
    "table",
]
