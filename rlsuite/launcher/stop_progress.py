"""How far a trial is toward its stop criteria: the share done and the time left of each
counter criterion (the live view, `rlsuite.launcher.live_board`, draws them as bars)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rlsuite import metrics
from rlsuite.launcher.progress import finite

# Stop criteria that only count up, at a roughly steady pace: their fraction done
# extrapolates to an ETA. Any other criterion (a return, an accuracy) is a threshold.
COUNTERS = frozenset(
    {
        metrics.TRAINING_ITERATION,
        metrics.TIME_TOTAL_S,
        metrics.ENV_STEPS_SAMPLED_LIFETIME,
        metrics.ENV_STEPS_TRAINED_LIFETIME,
        metrics.MODULE_STEPS_TRAINED_LIFETIME,
        metrics.EPISODES_LIFETIME,
        metrics.EPOCH,
        metrics.SNAPSHOTS,
    }
)


@dataclass(frozen=True)
class StopProgress:
    """Where a trial stands toward one stop criterion; Tune stops it at `value >= target`."""

    key: str
    value: float | None
    target: float
    fraction: float | None
    """Of a counter, the share done (0 to 1); None for a threshold."""
    eta_s: float | None
    """Of a counter, seconds of training left at the pace so far; None when unknown."""


def stop_progress(stop: Mapping[str, float], flat: Mapping[str, Any]) -> list[StopProgress]:
    """Progress toward every stop criterion, from a trial's last (flat) result."""
    elapsed = finite(flat.get(metrics.TIME_TOTAL_S))
    progress = []
    for key, target in stop.items():
        value = finite(flat.get(key))
        if key not in COUNTERS or target <= 0:
            progress.append(StopProgress(key, value, target, None, None))
            continue
        done = min(max((value or 0.0) / target, 0.0), 1.0)
        progress.append(StopProgress(key, value, target, done, _eta(key, value, target, elapsed)))
    return progress


def nearest_stop(stop: Mapping[str, float], flat: Mapping[str, Any]) -> StopProgress | None:
    """The counter criterion that will stop the trial first (the largest share done, which
    at a steady pace is also the shortest ETA); None when the stop has no counter."""
    counters = [p for p in stop_progress(stop, flat) if p.fraction is not None]
    return max(counters, key=lambda p: p.fraction or 0.0, default=None)


def _eta(key: str, value: float | None, target: float, elapsed: float | None) -> float | None:
    if value is not None and value >= target:
        return 0.0
    if key == metrics.TIME_TOTAL_S:
        return target - (value or 0.0)
    if not value or value <= 0 or not elapsed:
        return None
    return elapsed * (target - value) / value
