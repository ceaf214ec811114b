"""Progress toward a run's stop criteria (rlsuite/launcher/stop_progress.py): the fraction
done and the ETA toward each counter, and which stop the live view's bar follows."""

from __future__ import annotations

import pytest

from rlsuite import metrics
from rlsuite.launcher.stop_progress import nearest_stop, stop_progress

RETURN = metrics.EPISODE_RETURN_MEAN


@pytest.mark.parametrize(
    ("key", "target", "value", "time_s", "fraction", "eta_s"),
    [
        (metrics.TRAINING_ITERATION, 4, 1, 2.0, 0.25, 6.0),
        (metrics.ENV_STEPS_SAMPLED_LIFETIME, 1000, 250, 10.0, 0.25, 30.0),
        (metrics.TIME_TOTAL_S, 60, 15.0, 15.0, 0.25, 45.0),
        (metrics.EPOCH, 10, 5, 50.0, 0.5, 50.0),
        (metrics.TRAINING_ITERATION, 4, 4, 8.0, 1.0, 0.0),  # reached
        (metrics.TRAINING_ITERATION, 4, None, None, 0.0, None),  # no result yet
    ],
)
def test_fraction_and_eta_toward_a_counter(key, target, value, time_s, fraction, eta_s) -> None:
    flat = (
        {key: value, metrics.TIME_TOTAL_S: time_s} if key != metrics.TIME_TOTAL_S else {key: value}
    )
    [progress] = stop_progress({key: target}, flat)
    assert progress.fraction == pytest.approx(fraction)
    assert progress.eta_s == (None if eta_s is None else pytest.approx(eta_s))


def test_a_return_threshold_has_no_fraction_and_the_nearest_counter_wins() -> None:
    stop = {RETURN: 450.0, metrics.ENV_STEPS_SAMPLED_LIFETIME: 1000, metrics.TRAINING_ITERATION: 10}
    flat = {RETURN: 120.0, metrics.ENV_STEPS_SAMPLED_LIFETIME: 500, metrics.TRAINING_ITERATION: 2}
    by_key = {p.key: p for p in stop_progress(stop, {**flat, metrics.TIME_TOTAL_S: 20.0})}
    assert (by_key[RETURN].value, by_key[RETURN].fraction, by_key[RETURN].eta_s) == (
        120.0,
        None,
        None,
    )
    nearest = nearest_stop(stop, {**flat, metrics.TIME_TOTAL_S: 20.0})
    assert nearest is not None and nearest.key == metrics.ENV_STEPS_SAMPLED_LIFETIME
    assert nearest_stop({RETURN: 450.0}, flat) is None
