"""Supervised workloads (ResNet on images, BERT on text) on Ray Train, driven by Tune.

`config.SupervisedConfig` is what `Experiment.config` holds; `registry` names the data
sets and models (its docstring is the contract a data or model module implements);
`loop` is the one Ray Train loop every supervised experiment runs.
"""

from rlsuite.supervised.config import SupervisedConfig

__all__ = ["SupervisedConfig"]
