"""Multi-agent helpers: policy mappings for `AlgorithmConfig.multi_agent()` and their checks,
and MAPPO's centralized critic (`mappo(config)`)."""

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
from rlsuite.multiagent.validate import check_multi_agent

__all__ = [
    "SHARED",
    "CentralizedCriticPPOModule",
    "MultiAgentSettings",
    "agent_type",
    "by_type",
    "check_multi_agent",
    "independent",
    "mappo",
    "shared",
    "table",
]
