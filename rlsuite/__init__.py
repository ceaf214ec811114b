"""rlsuite: reinforcement-learning and multi-agent training on Ray RLlib, Tune and Train."""

from rlsuite.experiment import ASHA, PBT, Experiment

__all__ = ["ASHA", "PBT", "Experiment"]
