"""Aggregate scores over seeds the way rliable does (Agarwal et al., 2021).

IQM is the mean of the middle 50% of runs; intervals are percentile bootstraps over
runs, stratified by task (each task's runs are resampled separately). rliable itself
pulls in arch, statsmodels and seaborn for these few lines, so they live here instead.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.stats import trim_mean

BOOTSTRAP_REPS = 2000
CONFIDENCE = 0.95


def iqm(scores: np.ndarray) -> float:
    """Interquartile mean over all runs and tasks (rliable's `aggregate_iqm`)."""
    return float(trim_mean(np.asarray(scores, dtype=float), proportiontocut=0.25, axis=None))


def stratified_bootstrap_ci(
    scores: np.ndarray,
    statistic: Callable[[np.ndarray], float] = iqm,
    reps: int = BOOTSTRAP_REPS,
    seed: int = 0,
) -> tuple[float, float]:
    """95% percentile interval of `statistic` over (runs, tasks) scores, resampling runs
    with replacement within each task column."""
    scores = np.asarray(scores, dtype=float).reshape(len(scores), -1)
    rng = np.random.default_rng(seed)
    runs, tasks = scores.shape
    picks = rng.integers(0, runs, size=(reps, runs, tasks))
    samples = [statistic(np.take_along_axis(scores, pick, axis=0)) for pick in picks]
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def curve_band(
    xs: list[np.ndarray], ys: list[np.ndarray], points: int = 200, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean curve over runs with a 95% bootstrap band, on a grid up to the shortest run
    (no extrapolation: every point averages all runs). Returns (grid, mean, low, high)."""
    curves = [_monotone(x, y) for x, y in zip(xs, ys, strict=True)]
    curves = [(x, y) for x, y in curves if len(x)]
    if not curves:  # no run reports this x (results without time_total_s): no curve
        empty = np.array([])
        return empty, empty, empty, empty
    end = min(x[-1] for x, _ in curves)
    start = max(x[0] for x, _ in curves)
    grid = np.linspace(start, max(end, start), points)
    table = np.stack([np.interp(grid, x, y) for x, y in curves])  # (runs, points)
    picks = np.random.default_rng(seed).integers(0, len(table), size=(BOOTSTRAP_REPS, len(table)))
    means = table[picks].mean(axis=1)  # (reps, points)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail], axis=0)
    return grid, table.mean(axis=0), low, high


def _monotone(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A run's points where both are known, its x made non-decreasing (np.interp's
    contract; past it, it returns nonsense without a word). A PBT exploit restores another
    trial's checkpoint, whose env steps and time are a little behind the trial's own: the
    points after it pile up at the trial's furthest x until it passes that again."""
    known = np.isfinite(x) & np.isfinite(y)
    return np.maximum.accumulate(x[known]), y[known]
