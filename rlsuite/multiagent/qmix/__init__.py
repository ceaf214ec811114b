"""QMIX and VDN (value decomposition for cooperative teams) as an RLlib algorithm.

    from rlsuite.multiagent.qmix import QMIXConfig, grouped

    config = QMIXConfig().environment(**grouped("mpe/simple_spread")).training(mixer="vdn")

Design: the team of a parallel multi-agent env plays as one RLlib agent (`TeamEnv`:
every agent's observation, the global state and action masks in, the joint action out,
the sum of the agents' rewards as its reward), so DQN's training step, RLlib's episode
replay buffers, connectors, checkpoints and metrics work unchanged; `QMIXConfig` is a
`DQNConfig` whose RLModule holds one parameter-shared Q network (agent-id one-hot) and the
mixer (`mixers.py`), and whose learner computes the double-Q TD loss on Q_tot.
"""

from rlsuite.multiagent.qmix.config import QMIXAlgorithm, QMIXConfig
from rlsuite.multiagent.qmix.mixers import MIXERS, QMIX, VDN, QMIXMixer, VDNMixer
from rlsuite.multiagent.qmix.module import QMIXTorchRLModule
from rlsuite.multiagent.qmix.team_env import TeamEnv, grouped, team_env

__all__ = [
    "MIXERS",
    "QMIX",
    "VDN",
    "QMIXAlgorithm",
    "QMIXConfig",
    "QMIXMixer",
    "QMIXTorchRLModule",
    "TeamEnv",
    "VDNMixer",
    "grouped",
    "team_env",
]
