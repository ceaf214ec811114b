"""What the live view (`rlsuite.launcher.live`) draws: the trials' latest results and, from
them, a bar toward the nearest stop criterion with elapsed time and ETA for one trial, or
one table of trials for a sweep.

Tune's hooks update the board in the driver's main thread while `rich.live.Live` renders it
from its refresh thread, so both go through one lock.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ray.tune.experiment import Trial
from rich import box
from rich.console import Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from rlsuite import metrics
from rlsuite.launcher.progress import finite, label
from rlsuite.launcher.stop_progress import StopProgress, nearest_stop, stop_progress

_STATUS = {
    Trial.PENDING: ("pending", "dim"),
    Trial.RUNNING: ("running", "green"),
    Trial.PAUSED: ("paused", "yellow"),
    Trial.TERMINATED: ("done", "blue"),
    Trial.ERROR: ("error", "bold red"),
}
# After the metric: its best, PBT perturbations, the bar and its count, the ETA.
_SWEEP_COLUMNS = ("best", "pert.", "", "", "ETA")
_PERTURBED = "@perturbed["  # Tune's PBT appends the new values to a trial's tag after this


@dataclass
class _Row:
    trial: Trial
    started: float
    flat: dict[str, Any] = field(default_factory=dict)
    received: float | None = None
    """When the last result came (time.monotonic); None before the first."""
    best: float | None = None
    perturbations: int = 0


@dataclass(frozen=True)
class _Clock:
    nearest: StopProgress | None
    elapsed_s: float | None
    eta_s: float | None


class Board:
    """The trials' latest results and their rendering (`render`)."""

    def __init__(self, stop: dict[str, float], metric: str, metric_mode: str, num_trials: int):
        self.stop = stop
        self.metric = metric
        self.metric_label = label(metric)
        self._higher_is_better = metric_mode != "min"
        self._num_trials = num_trials
        self._rows: dict[str, _Row] = {}
        self._lock = threading.Lock()
        self._started = time.monotonic()

    def add(self, trial: Trial, starting: bool = False) -> None:
        """A trial to show; `starting`: it starts now (its elapsed time counts from here)."""
        with self._lock:
            row = self._rows.setdefault(trial.trial_id, _Row(trial, time.monotonic()))
            row.trial = trial
            if starting:
                row.started = time.monotonic()

    def update(self, trial: Trial, flat: dict[str, Any]) -> None:
        with self._lock:
            row = self._rows.setdefault(trial.trial_id, _Row(trial, time.monotonic()))
            row.flat, row.received = flat, time.monotonic()
            current = finite(flat.get(self.metric))
            if current is not None and (
                row.best is None or (current > row.best) == self._higher_is_better
            ):
                row.best = current

    def count_exploit(self, trial_tag: str) -> None:
        with self._lock:
            row = self._row_of_tag(trial_tag)
            if row is not None:
                row.perturbations += 1

    def trial_id(self, trial_tag: str) -> str:
        """The id of the trial PBT logs under `trial_tag` (its tag before any exploit)."""
        row = self._row_of_tag(trial_tag)
        return row.trial.trial_id if row else trial_tag

    def metric_of(self, trial_id: str) -> float | None:
        row = self._rows.get(trial_id)
        return finite(row.flat.get(self.metric)) if row else None

    def where(self, trial: Trial) -> str:
        """How far the trial got: `iteration 3 (return 21.5)`."""
        row = self._rows.get(trial.trial_id)
        flat = row.flat if row else {}
        iteration = int(flat.get(metrics.TRAINING_ITERATION, 0))
        return f"iteration {iteration} ({self.metric_label} {value(flat.get(self.metric))})"

    def render(self) -> RenderableType:
        with self._lock:
            now = time.monotonic()
            rows = sorted(self._rows.values(), key=lambda r: r.trial.trial_id)
            if not rows:
                return Text("waiting for the first trial to start ...", style="dim")
            if len(rows) == 1 and self._num_trials <= 1:
                return self._single(rows[0], now)
            return self._sweep(rows, now)

    def _row_of_tag(self, trial_tag: str) -> _Row | None:
        tag = trial_tag.split(_PERTURBED)[0]
        matches = [
            r for r in self._rows.values() if r.trial.experiment_tag.split(_PERTURBED)[0] == tag
        ]
        return matches[0] if len(matches) == 1 else None

    def _single(self, row: _Row, now: float) -> RenderableType:
        clock = self._clock(row, now)
        line = Table.grid(padding=(0, 1))
        line.add_row(
            Text(row.trial.trial_id, style="bold"),
            _status(row.trial),
            _bar(clock.nearest, row.trial, width=30),
            _done(clock.nearest),
            f"elapsed {_duration(clock.elapsed_s)}",
            f"ETA {_eta(clock, row.trial)}",
        )
        flat = row.flat
        current = f"{self.metric_label} {value(flat.get(self.metric))} (best {value(row.best)})"
        numbers = []
        for p in stop_progress(self.stop, flat):
            if p.fraction is None and p.key == self.metric:
                current += f" / stop at {value(p.target)}"
            elif p.fraction is None:
                numbers.append(f"{label(p.key)} {value(p.value)} / stop at {value(p.target)}")
        numbers.insert(0, current)
        if metrics.EPOCH in flat:
            numbers.append(f"samples/s {_rate(flat.get(metrics.SAMPLES_PER_SECOND))}")
        else:
            numbers.append(f"env steps {_count(flat.get(metrics.ENV_STEPS_SAMPLED_LIFETIME))}")
            numbers.append(f"env steps/s {_rate(flat.get(metrics.ENV_STEPS_PER_SECOND))}")
        return Group(line, Text("   ".join(numbers)))

    def _sweep(self, rows: list[_Row], now: float) -> RenderableType:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        headers = ("trial", "status", "iter", self.metric_label, *_SWEEP_COLUMNS)
        for header in headers:
            table.add_column(header, justify="left" if header in ("trial", "status") else "right")
        for row in rows:
            clock = self._clock(row, now)
            table.add_row(
                row.trial.trial_id,
                _status(row.trial),
                str(int(row.flat.get(metrics.TRAINING_ITERATION, 0))),
                value(row.flat.get(self.metric)),
                value(row.best),
                str(row.perturbations),
                _bar(clock.nearest, row.trial, width=12),
                _done(clock.nearest),
                _eta(clock, row.trial),
            )
        statuses = [_STATUS.get(r.trial.status, (r.trial.status, ""))[0] for r in rows]
        counts = ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses))
        total = max(self._num_trials, len(rows))
        if total > len(rows):
            counts += f", {total - len(rows)} not started"
        header = f"{total} trials: {counts} | elapsed {_duration(now - self._started)}"
        return Group(Text(header), table)

    def _clock(self, row: _Row, now: float) -> _Clock:
        """Progress toward the nearest stop, the trial's elapsed time and its ETA, moved on
        by the time since its last result while it runs.

        Elapsed is the larger of Tune's training time and the wall time since the trial
        started here: Tune's `time_total_s` counts its training iterations only, so the
        clock, which counts from the start before the first result, went back at a result
        (a terminal run showed 0:00:18, then 0:00:05). A restored trial's training time
        from earlier runs is the larger one and shows as it is."""
        nearest = nearest_stop(self.stop, row.flat)
        running = row.trial.status == Trial.RUNNING
        if row.received is None:
            return _Clock(nearest, now - row.started if running else None, None)
        since = now - row.received if running else 0.0
        wall = (now if running else row.received) - row.started
        elapsed = max((finite(row.flat.get(metrics.TIME_TOTAL_S)) or 0.0) + since, wall)
        eta = None if nearest is None or nearest.eta_s is None else max(nearest.eta_s - since, 0)
        return _Clock(nearest, elapsed, eta)


def value(number: Any) -> str:
    """A metric or config value, short: 3 significant digits, thousands separated."""
    if isinstance(number, bool) or not isinstance(number, int | float):
        return "-" if number is None else str(number)
    if abs(number) >= 1000:
        return f"{number:,.0f}"
    return f"{number:.3g}"


def _count(number: Any) -> str:
    """A counter, short: 512, 2k, 1.5M."""
    number = finite(number)
    if number is None:
        return "-"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(number) >= scale:
            return f"{number / scale:.3g}{suffix}"
    return f"{number:.4g}"


def _rate(number: Any) -> str:
    number = finite(number)
    return "-" if number is None else f"{number:,.0f}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def _status(trial: Trial) -> Text:
    text, style = _STATUS.get(trial.status, (str(trial.status).lower(), ""))
    return Text(text, style=style)


def _bar(nearest: StopProgress | None, trial: Trial, width: int) -> ProgressBar:
    if nearest is None or nearest.fraction is None:  # no counter to stop at: pulse while running
        return ProgressBar(total=None if trial.status == Trial.RUNNING else 1.0, width=width)
    return ProgressBar(total=1.0, completed=nearest.fraction, width=width, finished_style="green")


def _done(nearest: StopProgress | None) -> str:
    if nearest is None:
        return ""
    return f"{_count(nearest.value or 0)}/{_count(nearest.target)} {label(nearest.key)}"


def _eta(clock: _Clock, trial: Trial) -> str:
    if trial.status == Trial.TERMINATED:
        return "done"
    if trial.status == Trial.ERROR:
        return "-"
    return _duration(clock.eta_s)
