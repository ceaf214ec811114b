"""RLlib's action-masking PPO RLModule (`examples/rl_modules/classes/action_masking_rlm.py`),
imported once for the suite's masked modules (masking.py, mirror.py).

Importing it directly logs a deprecation notice about a PPO module it imports under an
old name, once per process; on bad input that would be a second line next to the one-line
error, so it is imported here with that logger silenced.
"""

from __future__ import annotations

import logging

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

__all__ = ["ActionMaskingRLModule", "ActionMaskingTorchRLModule"]
