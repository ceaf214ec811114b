"""The benchmark table's records (docs/benchmarks.json) and the `--check` gate's arithmetic.

The JSON holds what was measured, nothing else: `rows` maps an experiment's name to its
latest measurement, `checks` maps a fast row's name to its latest `--check`-sized run.
A run with `--only X` replaces X's entries and keeps every other. A measurement keeps
its scores per seed, the statistics over them (IQM and its 95% stratified-bootstrap
interval, mean, std, as `rlsuite.report` computes them), the exact command, the machine,
the versions and the date.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rlsuite.errors import UsageError
from rlsuite.reporting import stats

VERSION = 1


@dataclass(frozen=True)
class Scores:
    """Statistics of the final scores over seeds (NaN scores left out)."""

    iqm: float
    ci: tuple[float, float]
    """95% stratified-bootstrap interval of the IQM."""
    mean: float
    std: float

    @classmethod
    def of(cls, scores: list[float]) -> Scores:
        finite = np.array([s for s in scores if math.isfinite(s)], dtype=float)
        if not len(finite):
            return cls(math.nan, (math.nan, math.nan), math.nan, math.nan)
        low, high = stats.stratified_bootstrap_ci(finite)
        return cls(stats.iqm(finite), (low, high), float(finite.mean()), float(finite.std()))


@dataclass(frozen=True)
class Measurement:
    """One row measured over seeds: the JSON entry of a row or of a check."""

    command: str
    """The shell command that ran, as a reader would type it."""
    stop: list[str]
    """The `--stop` values it ran to (the file's own when the row replaces none)."""
    metric: str
    """The result key scored: the experiment's metric (summary.json)."""
    window: str
    """What a final score averages (`FinalWindow.describe()`)."""
    seeds: list[int]
    scores: list[float]
    """Final score per seed (for a population: its best trial's)."""
    steps: list[float]
    """Env steps (or epochs, see steps_unit) each seed ran."""
    steps_unit: str
    throughput: float | None
    """Median env steps (or samples) per second over every iteration."""
    throughput_unit: str
    train_s: list[float]
    """Tune's training seconds per seed."""
    wall_s: float
    """The command's wall seconds, Ray's start-up included."""
    figure: str | None
    """Learning-curve PNG, relative to the records' folder (the page's links)."""
    machine: dict[str, Any]
    versions: dict[str, str]
    date: str
    summary: Scores

    def to_json(self) -> dict[str, Any]:
        return _finite_or_none(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Measurement:
        summary = data["summary"]
        scores = Scores(
            _nan(summary["iqm"]),
            (_nan(summary["ci"][0]), _nan(summary["ci"][1])),
            _nan(summary["mean"]),
            _nan(summary["std"]),
        )
        values = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name != "summary"}
        for key in ("scores", "steps", "train_s"):  # null: a seed without the number
            values[key] = [_nan(value) for value in values[key]]
        return cls(**values, summary=scores)


@dataclass
class Records:
    """Everything measured: each row's latest measurement and each fast row's latest check run."""

    rows: dict[str, Measurement]
    checks: dict[str, Measurement]

    @classmethod
    def load(cls, path: Path) -> Records:
        """The records at `path`; none when it does not exist; UsageError (one line) when
        it is not this table's JSON."""
        if not path.exists():
            return cls({}, {})
        try:
            data = json.loads(path.read_text())
            if data["version"] != VERSION:
                raise ValueError(f"version {data['version']!r}, this script writes {VERSION!r}")
            return cls(
                {k: Measurement.from_json(v) for k, v in data["rows"].items()},
                {k: Measurement.from_json(v) for k, v in data["checks"].items()},
            )
        except (OSError, ValueError, KeyError, TypeError, IndexError) as error:
            raise UsageError(
                f"{path} is not the benchmark table's records ({type(error).__name__}: "
                f"{error}); restore it from git, or run the script that wrote it"
            ) from None

    def save(self, path: Path) -> None:
        data = {
            "version": VERSION,
            "rows": {k: m.to_json() for k, m in sorted(self.rows.items())},
            "checks": {k: m.to_json() for k, m in sorted(self.checks.items())},
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n")


@dataclass(frozen=True)
class CheckOutcome:
    """A fresh short run of a fast row against its recorded interval."""

    name: str
    iqm: float
    recorded: Measurement
    error: str | None = None
    """Why the fresh run gave no IQM (its command failed)."""

    @property
    def passed(self) -> bool:
        low, high = self.recorded.summary.ci
        return math.isfinite(self.iqm) and low <= self.iqm <= high

    def to_json(self) -> dict[str, Any]:
        return _finite_or_none(
            {
                "row": self.name,
                "passed": self.passed,
                "iqm": self.iqm,
                "recorded_ci": list(self.recorded.summary.ci),
                "error": self.error,
            }
        )

    def line(self) -> str:
        low, high = self.recorded.summary.ci
        if self.error is not None:
            where = f"the run failed: {self.error.splitlines()[0]}"
        elif not math.isfinite(self.iqm):
            where = "no final score (no seed reported the metric)"
        else:
            side = "inside" if self.passed else ("below" if self.iqm < low else "above")
            where = f"IQM {self.iqm:.4g} {side} the recorded [{low:.4g}, {high:.4g}]"
        recorded = self.recorded
        return (
            f"{'PASS' if self.passed else 'FAIL'} {self.name}: {where} "
            f"({len(recorded.seeds)} seeds at {' '.join(recorded.stop)}, recorded {recorded.date})"
        )


def missing_check(name: str, check_stop: tuple[str, ...], records: Records) -> str | None:
    """Why `--check` cannot gate a fast row (no record, or one made at another stop);
    None when it can."""
    record = records.checks.get(name)
    fix = f"record it with  python scripts/benchmark.py --only {name} --record-check"
    if record is None:
        return f"{name} has no recorded check run; {fix}"
    if record.stop != list(check_stop):
        return (
            f"{name}'s check run was recorded at {' '.join(record.stop)}, the table now "
            f"checks at {' '.join(check_stop)}; {fix}"
        )
    if not all(math.isfinite(bound) for bound in record.summary.ci):
        return f"{name}'s recorded check run has no interval (no final scores); {fix}"
    return None


def missing_checks(rows: list[tuple[str, tuple[str, ...]]], records: Records) -> str | None:
    """One line on why `--check` cannot gate the (name, check stop) rows; None when it
    can gate every one."""
    problems = [(name, missing_check(name, stop, records)) for name, stop in rows]
    problems = [(name, line) for name, line in problems if line is not None]
    if len(problems) == 1:
        return problems[0][1]
    if problems:
        names = ", ".join(name for name, _ in problems)
        only = " ".join(f"--only {name}" for name, _ in problems)
        return (
            f"{names} have no usable recorded check run; record them with  "
            f"python scripts/benchmark.py {only} --record-check"
        )
    return None


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _finite_or_none(value: Any) -> Any:
    """JSON without NaN: a missing number is null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite_or_none(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_or_none(item) for item in value]
    return value
