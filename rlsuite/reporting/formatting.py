"""How a report prints numbers: one rule for returns (-43.04, 476.9), win rates and
accuracies (0.6129), so configs that differ in the third digit do not all read 0.6.

`docs/benchmarks.md` (scripts/benchmarks/table_render.py) prints its scores with it too.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def number(value: float) -> str:
    """Four significant digits (0.6129, 0.04619, -43.04, 476.9, 0.00008165); from 1,000 on,
    whole and with thousands separated (12,345); never 1.234e+04 or 8.165e-05 (a small std
    of accuracies); "-" for NaN (no value)."""
    if math.isnan(value):
        return "-"
    if math.isinf(value):
        return str(value)  # "inf": a diverged value shows as such
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    # What f"{value:.4g}" prints from 1e-4 on, and no exponent below. + 0.0: -0.0 is 0.
    return np.format_float_positional(
        value + 0.0, precision=4, unique=False, fractional=False, trim="-"
    )


def setting(value: Any) -> str:
    """A config value (a PBT mutation, a searched key): floats as `number`, others as is."""
    return number(value) if isinstance(value, float) else str(value)
