"""MADDPG and MASAC (centralized critics, decentralized actors) as RLlib algorithms.

    from rlsuite.multiagent import by_type
    from rlsuite.multiagent.maddpg import MADDPGConfig, agent_policies, joint

    config = (
        MADDPGConfig()
        .environment(**joint("mpe/simple_tag"))
        .training(agent_policies=agent_policies("mpe/simple_tag", by_type("mpe/simple_tag")))
    )

Design: the agents of a parallel multi-agent env play as one RLlib agent (`JointEnv`:
every agent's observation in, the joint action out, each agent's reward kept), so SAC's
training step, RLlib's episode replay buffers, connectors, target updates, checkpoints
and metrics work unchanged, and a replayed step holds every agent's observation and
action at once, which a centralized critic needs. The RLModule holds one actor and one
critic per policy (`agent_policies` maps the agents, in the env's order, to policies);
env runners build it inference-only, with the actors alone. `returns` logs each policy's
and agent's return beside RLlib's team return, under the multi-agent runs' keys.
"""

from rlsuite.multiagent.maddpg.config import (
    MADDPG,
    MASAC,
    MADDPGConfig,
    MASACConfig,
    agent_policies,
)
from rlsuite.multiagent.maddpg.joint_env import JointEnv, joint
from rlsuite.multiagent.maddpg.masac_module import MASACTorchRLModule
from rlsuite.multiagent.maddpg.module import MADDPGTorchRLModule

__all__ = [
    "MADDPG",
    "MASAC",
    "JointEnv",
    "MADDPGConfig",
    "MADDPGTorchRLModule",
    "MASACConfig",
    "MASACTorchRLModule",
    "agent_policies",
    "joint",
]
