"""Multi-agent helpers: policy mappings for `AlgorithmConfig.multi_agent()` and their checks."""

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
    "MultiAgentSettings",
    "agent_type",
    "by_type",
    "check_multi_agent",
    "independent",
    "shared",
    "table",
]
