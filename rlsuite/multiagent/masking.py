"""RLlib's action-masking PPO RLModule, for games whose observations carry an `action_mask`.

`ActionMaskingTorchRLModule` (RLlib's `examples/rl_modules/classes/action_masking_rlm.py`)
builds PPO's networks for the `observations` part of a Dict observation and adds
log(mask) to the action logits, so illegal moves get zero probability when acting and in
the loss. The registry's turn-based games give exactly those keys (envs/multiagent.py).

Importing it directly logs a deprecation notice about a PPO module it imports under an
old name, once per process; on bad input that would be a second line next to the one-line
error, so it is imported here with that logger silenced.
"""

from __future__ import annotations

import logging

from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

_deprecation_logger = logging.getLogger("ray._common.deprecation")
_was_disabled = _deprecation_logger.disabled
_deprecation_logger.disabled = True
try:
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingRLModule,
        ActionMaskingTorchRLModule,
    )
finally:
    _deprecation_logger.disabled = _was_disabled


def masked_ppo_spec(model_config: DefaultModelConfig | None = None) -> RLModuleSpec:
    """A PPO RLModule that applies the observation's action mask (the model config defaults
    to the algorithm's `.rl_module(model_config=...)`)."""
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config)


__all__ = ["ActionMaskingRLModule", "ActionMaskingTorchRLModule", "masked_ppo_spec"]
