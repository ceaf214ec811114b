"""Building RLModules before Ray starts, as the env runners will: a model config they
cannot take would otherwise fail inside the trial with a long traceback."""

from __future__ import annotations

import logging
from typing import Any

from ray.rllib.utils.error import UnsupportedSpaceException

BUILD_ERRORS = (
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    NotImplementedError,
    UnsupportedSpaceException,
    RuntimeError,  # torch's, for a layer it cannot make (ranges.py refuses the known ones)
    IndexError,
)
"""What RLlib's catalogs and modules raise for a model config or space they cannot take."""


def build_failure(spec: Any) -> str | None:
    """The first line of RLlib's error building `spec`'s RLModule, or None where it builds.
    Building logs RLlib's notices (its own deprecated code paths, a catalog it could not
    make): on bad input the user must see one line only."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        spec.build()
    except BUILD_ERRORS as error:
        return (str(error).strip().splitlines() or [type(error).__name__])[0]
    finally:
        logging.disable(previous)
    return None
