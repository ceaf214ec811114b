"""Renewing main exploiters: which ones the learner's win rates renew, and the setting's
check. The renewal on a real Algorithm is in test_selfplay_exploiters.py, beside the
exploiter Algorithm it uses."""

from __future__ import annotations

import math

import pytest

from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.multiagent.league import exploiters_to_renew
from rlsuite.multiagent.selfplay import OpponentPool, selfplay_callback

SEATS = ("player_0", "player_1")


def test_which_exploiters_are_renewed() -> None:
    mapping = OpponentPool(SEATS, exploiters=("a", "b", "c", "d"), exploiter_share=0.5)
    rates = {"a": 0.2, "b": 0.5, "c": math.nan, "main_v1": 0.0}  # d played no game
    result = {"env_runners": {metrics.POOL_WIN_RATES_KEY: rates}}
    assert exploiters_to_renew(mapping, result, below=0.3) == ["a"]
    assert exploiters_to_renew(mapping, result, below=0.6) == ["a", "b"]
    assert exploiters_to_renew(mapping, {}, below=0.6) == []


@pytest.mark.parametrize("below", [0.0, 1.0, -0.1])
def test_a_reset_threshold_outside_zero_one_is_refused(below: float) -> None:
    with pytest.raises(UsageError, match=rf"exploiter_reset_below={below}: .* \(0, 1\)"):
        selfplay_callback(exploiter_reset_below=below)
