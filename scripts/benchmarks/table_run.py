"""Measuring a row of the benchmark table: its `python -m rlsuite.run` commands as child
processes (as a user runs them), then its results read back with `rlsuite.reporting`.

A seed's final score is `Trial.final_score` over `rlsuite.report`'s default window; for a
population row (a sweep, PBT) each seed is one run of the whole population and scores its
best trial, so the statistics are over independent populations, never over the members
of one. The learning-curve figure is `rlsuite.report`'s, over the scored trials.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.metadata
import math
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from benchmarks.common import ROOT, run_child
from benchmarks.table import STORAGE_PATH, Row, commands
from benchmarks.table_records import CheckOutcome, Measurement, Records, Scores
from benchmarks.table_render import render
from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.reporting import figures, runs

WINDOW = runs.FinalWindow()  # rlsuite.report's default: the last 5 iterations
# Every row, threshold stops included, is scored over this window. Scoring a threshold run
# at the iteration that met its stop would pick the one value the stop selected (tried:
# sac_pendulum's seed 0 stopped on a single episode of -2 after -656, -695 and -384).


def measure(
    row: Row, seeds: int, *, check: bool = False, figure_dir: Path | None = None
) -> Measurement:
    """Run a row (`check`: its `--check` run) and score it; RuntimeError when a command
    fails. `figure_dir`: where its learning-curve PNG goes (None: no figure), beside the
    records (docs/benchmarks/ for docs/benchmarks.json)."""
    shown = commands(row, seeds, check)
    if shown.prepare:  # the row's data; its seconds are not the runs' wall time
        run_child([sys.executable, *shown.prepare])
    wall_s = sum(run_child([sys.executable, *argv]).wall_s for argv in shown.argvs)
    loaded = [runs.load(ROOT / STORAGE_PATH / name) for name in shown.names]
    stop = row.check_stop if check else row.measured_stop()
    return score(row, loaded, shown.line, stop, wall_s, figure_dir)


def score(
    row: Row,
    loaded: list[runs.Config],
    command: str,
    stop: tuple[str, ...],
    wall_s: float,
    figure_dir: Path | None = None,
) -> Measurement:
    """The measurement of a row's finished runs (`loaded`, one per command)."""
    config = scored(row, loaded)
    steps, steps_unit, throughput, throughput_unit = _progress(config.trials)
    figure = None
    if figure_dir is not None and steps_unit == "env steps":  # supervised: rlsuite.report
        figure_dir.mkdir(parents=True, exist_ok=True)
        path = figures.learning_curves(
            [config], runs.progress([config]), figure_dir / f"{row.name}.png"
        )
        figure = os.path.relpath(path, figure_dir.parent)
    scores = [t.final_score(config.metric, WINDOW) for t in config.trials]
    return Measurement(
        command=command,
        stop=list(stop),
        metric=config.metric,
        window=WINDOW.describe(),
        seeds=[_seed(t, i) for i, t in enumerate(config.trials)],
        scores=scores,
        steps=steps,
        steps_unit=steps_unit,
        throughput=throughput,
        throughput_unit=throughput_unit,
        train_s=[_last(t, metrics.TIME_TOTAL_S) for t in config.trials],
        wall_s=wall_s,
        figure=figure,
        machine=machine(),
        versions=versions(),
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        summary=Scores.of(scores),
    )


def scored(row: Row, loaded: list[runs.Config]) -> runs.Config:
    """The trials that are the row's seeds: every trial of its one run, or the best
    trial of each population run."""
    first = loaded[0]
    if not row.population:
        trials = sorted(first.trials, key=lambda t: _seed(t, 0))
    else:
        trials = [best_trial(config) for config in loaded]
    return dataclasses.replace(first, label=row.name, trials=trials, lineage=[])


def best_trial(config: runs.Config) -> runs.Trial:
    """The population's trial with the best final score (NaN scores last)."""
    sign = 1.0 if config.mode == "max" else -1.0

    def rank(trial: runs.Trial) -> float:
        score = trial.final_score(config.metric, WINDOW)
        return sign * score if math.isfinite(score) else -math.inf

    return max(config.trials, key=rank)


def _progress(trials: list[runs.Trial]) -> tuple[list[float], str, float | None, str]:
    """Steps per seed and median throughput: env steps for RL runs, epochs and samples
    for supervised ones."""
    steps = [_last(t, metrics.ENV_STEPS_SAMPLED_LIFETIME) for t in trials]
    if any(math.isfinite(s) for s in steps):
        return steps, "env steps", _median(trials, metrics.ENV_STEPS_PER_SECOND), "env steps/s"
    epochs = [_last(t, metrics.EPOCH) for t in trials]
    return epochs, "epochs", _median(trials, metrics.SAMPLES_PER_SECOND), "samples/s"


def _last(trial: runs.Trial, key: str) -> float:
    values = trial.series(key)
    values = values[np.isfinite(values)]
    return float(values[-1]) if len(values) else math.nan


def _median(trials: list[runs.Trial], key: str) -> float | None:
    """Median over every iteration of every trial (robust to a slow first one), as
    `rlsuite.report`'s throughput."""
    values = np.concatenate([t.series(key) for t in trials])
    values = values[np.isfinite(values)]
    return float(np.median(values)) if len(values) else None


def _seed(trial: runs.Trial, default: int) -> int:
    return int(trial.seed) if isinstance(trial.seed, int | float) else default


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "processor": platform.processor(),
        "gpus": _gpus(),
    }


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("ray", "torch"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def _cpu_model() -> str | None:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor() or None
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else None


def _gpus() -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    done = subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
    )
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def record_rows(
    rows: list[Row],
    seeds: int,
    records: Records,
    output: Path,
    *,
    checks_only: bool = False,
    out: TextIO = sys.stdout,
) -> list[str]:
    """Measure each row (and the check run of each fast one; `checks_only`: only those),
    saving the records and the page after each, so a long run keeps what it finished.
    Returns the names of the rows that failed (each printed with its error). `out`: where
    the progress lines go."""
    failed: list[str] = []
    write(records, output)  # the page follows the rows even when none runs
    for row in rows:
        try:
            if not checks_only:
                print(f"{row.name}: {commands(row, seeds).line}", file=out, flush=True)
                records.rows[row.name] = measure(row, seeds, figure_dir=output.with_suffix(""))
                print(f"{row.name}: {_summary_line(records.rows[row.name])}", file=out, flush=True)
            if row.check_stop:
                line = commands(row, seeds, check=True).line
                print(f"{row.name} check: {line}", file=out, flush=True)
                records.checks[row.name] = measure(row, seeds, check=True)
                summary = _summary_line(records.checks[row.name])
                print(f"{row.name} check: {summary}", file=out, flush=True)
        except (RuntimeError, UsageError) as error:
            failed.append(row.name)
            print(f"{row.name} failed: {error}", file=sys.stderr, flush=True)
        write(records, output)
    return failed


def write(records: Records, output: Path) -> None:
    """The records beside the page (NAME.json), and the page."""
    records.save(output.with_suffix(".json"))
    output.write_text(render(records))


def check_rows(rows: list[Row], records: Records, out: TextIO = sys.stdout) -> list[CheckOutcome]:
    """Run each fast row at its check stop with its recorded seeds; one line each."""
    outcomes = []
    for row in rows:
        recorded = records.checks[row.name]
        try:
            iqm = measure(row, len(recorded.seeds), check=True).summary.iqm
            outcomes.append(CheckOutcome(row.name, iqm, recorded))
        except (RuntimeError, UsageError) as error:
            print(f"{row.name} failed: {error}", file=sys.stderr, flush=True)
            outcomes.append(CheckOutcome(row.name, math.nan, recorded, error=str(error)))
        print(outcomes[-1].line(), file=out, flush=True)
    return outcomes


def _summary_line(m: Measurement) -> str:
    low, high = m.summary.ci
    return (
        f"IQM {m.summary.iqm:.4g} [{low:.4g}, {high:.4g}] of {m.metric} over "
        f"{len(m.seeds)} seeds, {m.wall_s:.0f} s"
    )
