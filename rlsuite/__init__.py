"""rlsuite: reinforcement-learning and multi-agent training on Ray RLlib, Tune and Train."""

from rlsuite.experiment import ASHA, PB2, PBT, Experiment

__all__ = ["ASHA", "PB2", "PBT", "Experiment"]
