"""The shared number flags name the bound a value misses, as the flag needs it."""

from __future__ import annotations

import argparse

import pytest

from rlsuite.flags import non_negative_float, positive_float


@pytest.mark.parametrize("text", ["0", "-5", "-0.5"])
def test_a_positive_float_flag_refuses_zero_and_negatives_as_not_more_than_0(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as error:
        positive_float(text)
    assert str(error.value) == f"must be more than 0, got {float(text):g}"


def test_a_non_negative_float_flag_takes_0_and_refuses_negatives() -> None:
    assert non_negative_float("0") == 0.0
    with pytest.raises(argparse.ArgumentTypeError, match="must be 0 or more, got -1"):
        non_negative_float("-1")
