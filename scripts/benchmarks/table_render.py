"""docs/benchmarks.md, written from the records and the rows: every experiment is a row (a
few rows run a file at a stated budget under names of their own), a measured one with its
figures and the command that made them, any other with its command and "not measured
here" (and why, where it needs more than a 2-CPU machine, and where other runs of it are
written up). No figure appears that is not in the records.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from benchmarks.table import DEFAULT_SEEDS, ROWS, Row, commands, fast_rows
from benchmarks.table_records import Measurement, Records
from rlsuite.reporting.formatting import number

WIDTH = 92  # the docs' line length
COLUMNS = (
    "experiment",
    "stop",
    "score",
    "seeds",
    "IQM [95% CI]",
    "mean ± std",
    "per seed",
    "throughput",
    "time",
    "curve",
    "measured",
    "command",
)


def render(records: Records) -> str:
    """The page, beside the records (its figure links are relative to their folder)."""
    machines = _machines(records)
    lines = [*_header(machines), _cells(COLUMNS), _cells(["---"] * len(COLUMNS))]
    for row in ROWS:
        measured = records.rows.get(row.name)
        if measured is None:
            lines.append(unmeasured_line(row))
        else:
            lines.append(measured_line(row, measured, machines))
    return "\n".join([*lines, "", *_checks(records, machines)]) + "\n"


def _header(machines: list[str]) -> list[str]:
    own_names = ", ".join(f"`{row.name}`" for row in ROWS if row.name != row.stem)
    paragraphs = [
        "Every experiment in `experiments/` is a row under its file's name. A few rows run a "
        f"file at a smaller stated budget under a name of their own ({own_names}); the "
        "command beside each names the file, and first writes any data the row reads "
        "(nothing is downloaded). Every number here came from a run of "
        "the command beside it: `python scripts/benchmark.py` runs those commands and writes "
        'this page from `docs/benchmarks.json`. A row not run yet says "not measured here" '
        "and, where it needs more than a 2-CPU machine, what it needs; where other runs of "
        "its experiment (one seed, a shorter budget) are written up, it says where. A row "
        "measured before its experiment file changed says so in its `measured` cell, with "
        "where the changed file is measured; its figures are the earlier file's.",
        "Measure one row with `python scripts/benchmark.py --only NAME [--seeds N]`, every "
        "row that fits a 2-CPU machine with `python scripts/benchmark.py --budget-minutes M`; "
        "`--list` shows the rows, their stops and their recorded or estimated times. The results stay in "
        "`results/benchmarks/` (`python -m rlsuite.report results/benchmarks/NAME`; a sweep "
        "or PBT row has a folder per seed, `NAME-seedS`).",
        "Score: the experiment's metric (`rlsuite.metrics`) averaged over each seed's final "
        "iterations (the record's `window` in the JSON), as `rlsuite.report` does; for a "
        "sweep or a PBT population, each seed is a population (in a searcher's sweep, "
        "`--seed` seeds the searcher too) and its score is its best trial's. A row that stops at a threshold (a return, an accuracy) scores below it: the "
        "window holds the climb to it; a seed whose env steps end below the row's step "
        "budget met the threshold. IQM: the mean of the middle 50% of "
        "seeds, with its 95% stratified-bootstrap interval (rliable). Per seed: the env steps "
        "(or epochs) it ran. Throughput: the median over iterations. Time: Tune's training "
        "seconds per seed, and the command's wall time (Ray's start-up included; Tune runs "
        "seeds side by side where the CPUs allow).",
    ]
    lines = ["# Benchmarks", ""]
    for paragraph in paragraphs:
        lines += [*textwrap.wrap(paragraph, WIDTH, break_on_hyphens=False), ""]
    if machines:
        lines += ["Machines:", ""]
        lines += [f"- {_letter(i)}: {text}" for i, text in enumerate(machines)]
        lines.append("")
    return lines


def measured_line(row: Row, m: Measurement, machines: list[str]) -> str:
    low, high = m.summary.ci
    figure = f"[png]({m.figure})" if m.figure else ""
    measured = f"{m.date} ({_letter(machines.index(machine_text(m)))})"
    if row.changed_since:
        measured += f"; the file changed since: {row.changed_since}"
    return _cells(
        [
            f"`{row.name}`",
            _code(m.stop),
            f"`{m.metric}`",
            str(len(m.seeds)),
            f"{number(m.summary.iqm)} [{number(low)}, {number(high)}]",
            f"{number(m.summary.mean)} ± {number(m.summary.std)}",
            f"{' / '.join(number(v) for v in m.steps)} {m.steps_unit}",
            "" if m.throughput is None else f"{number(m.throughput)} {m.throughput_unit}",
            f"{' / '.join(number(v) for v in m.train_s)} s training; {number(m.wall_s)} s wall",
            figure,
            measured,
            f"`{m.command}`",
        ]
    )


def unmeasured_line(row: Row) -> str:
    status = "not measured here" + (f": {row.needs}" if row.needs else "")
    if row.written_up_in:
        status += f"; other runs, not in this table: {row.written_up_in}"
    blank = [""] * 6
    command = commands(row, DEFAULT_SEEDS).line
    return _cells(
        [f"`{row.name}`", _code(row.measured_stop()), "", "", status, *blank, f"`{command}`"]
    )


def _checks(records: Records, machines: list[str]) -> list[str]:
    text = [
        "`python scripts/benchmark.py --check` runs the fast rows again at their short stop "
        "with the recorded seeds and fails (exit 1) when a row's IQM falls outside its "
        "recorded 95% interval. CI runs none of it (minutes of training); run it after a "
        "change to the launcher, the RLlib settings or the Ray and torch versions. A "
        "measurement of a fast row records its check run too; "
        "`python scripts/benchmark.py --only NAME --record-check` records it alone. With 3 "
        "seeds the IQM is the mean and the interval is the seeds' range, so a row passes when "
        "its fresh mean lands inside the recorded seeds' range; how often an unchanged tree "
        "passes is not measured yet.",
    ]
    lines = [
        "## Regression gate",
        "",
        *textwrap.wrap(" ".join(text), WIDTH, break_on_hyphens=False),
        "",
    ]
    lines += [
        _cells(["row", "stop", "seeds", "IQM [95% CI]", "measured", "command"]),
        _cells(["---"] * 6),
    ]
    for row in fast_rows():
        m = records.checks.get(row.name)
        if m is None:
            record = f"`python scripts/benchmark.py --only {row.name} --record-check`"
            lines.append(
                _cells([f"`{row.name}`", _code(row.check_stop), "", "not recorded", "", record])
            )
            continue
        low, high = m.summary.ci
        when = f"{m.date} ({_letter(machines.index(machine_text(m)))})"
        interval = f"{number(m.summary.iqm)} [{number(low)}, {number(high)}]"
        lines.append(
            _cells(
                [
                    f"`{row.name}`",
                    _code(m.stop),
                    str(len(m.seeds)),
                    interval,
                    when,
                    f"`{m.command}`",
                ]
            )
        )
    return [*lines, ""]


def machine_text(m: Measurement) -> str:
    machine, versions = m.machine, m.versions
    gpus = ", ".join(machine.get("gpus") or []) or "no GPU"
    return (
        f"{machine.get('cpus')} CPUs ({machine.get('cpu_model') or 'unknown model'}), {gpus}; "
        f"Ray {versions.get('ray')}, torch {versions.get('torch')}, Python {versions.get('python')}"
    )


def list_lines(rows: Sequence[Row], records: Records) -> list[str]:
    """`--list`: each row's stop, whether it fits this kind of machine, and how long it
    takes: its recorded run's times where there is one, else the row's estimate."""
    lines = []
    for row in rows:
        here = "fits 2 CPUs" if row.cpu_ok else row.needs
        check = f"; --check at {' '.join(row.check_stop)}" if row.check_stop else ""
        lines.append(
            f"{row.name:<22} {' '.join(row.measured_stop()):<52} {here}; "
            f"{_duration(row, records.rows.get(row.name))}{check}"
        )
    return lines


def _duration(row: Row, measured: Measurement | None) -> str:
    """The recorded minutes when the row was measured at the stop it measures now."""
    times = [s for s in measured.train_s if math.isfinite(s)] if measured else []
    if measured is None or measured.stop != list(row.measured_stop()) or not times:
        return f"about {row.minutes:g} min a seed (estimate)"
    low, high = (_minutes(f(times)) for f in (min, max))
    spread = low if low == high else f"{low}-{high}"
    whose = "the best trial's training" if row.population else "training"
    return (
        f"measured {measured.date}: {spread} min of {whose} a seed, "
        f"{_minutes(measured.wall_s)} min wall for {len(measured.seeds)} seed"
        + ("s" if len(measured.seeds) != 1 else "")
    )


def _minutes(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes:.1f}" if minutes < 10 else f"{minutes:.0f}"


def _machines(records: Records) -> list[str]:
    """Each machine the records were measured on, in the table's order."""
    found = [records.rows.get(row.name) for row in ROWS] + [
        records.checks.get(row.name) for row in ROWS
    ]
    return list(dict.fromkeys(machine_text(m) for m in found if m is not None))


def _letter(index: int) -> str:
    return chr(ord("A") + index)


def _cells(values: Sequence[str]) -> str:
    return "| " + " | ".join(value.replace("|", "\\|") for value in values) + " |"


def _code(stop: Sequence[str]) -> str:
    return " ".join(f"`{value}`" for value in stop)
