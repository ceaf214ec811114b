"""What every benchmark shares: where the repository is, the one result API, a child
process run with its wall and CPU seconds, the command line, the machine's load and the
rule for rounds too far apart to read a ratio from.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rlsuite.flags import Parser

ROOT = Path(__file__).resolve().parents[2]
"""The repository: the benchmarks run its experiment files, which are not installed."""
EXPERIMENTS = ROOT / "experiments"
SCRIPTS = ROOT / "scripts"


@runtime_checkable
class Result(Protocol):
    """What `measure(...)` of every benchmark returns."""

    def report(self) -> str:
        """The figures for a person: a few lines or a table, the ratio to read included."""
        ...

    def to_json(self) -> dict[str, Any]:
        """The same figures as plain JSON values (`--json`)."""
        ...


def emit(result: Result, as_json: bool) -> None:
    print(json.dumps(result.to_json(), indent=2) if as_json else result.report(), flush=True)


NOISY = 0.25
"""Rounds further apart than this, relative to their median, give no ratio (issue 21)."""


def spread(values: Sequence[float]) -> tuple[float, float]:
    """The lowest and highest of a figure over rounds."""
    return min(values), max(values)


def disagrees(values: Sequence[float], tolerance: float = NOISY) -> bool:
    """Whether rounds "differ by more than 25%": (max - min) / |median| > `tolerance`.

    Exactly `tolerance` still agrees. One round cannot disagree with itself (and shows no
    spread either); a median of 0 disagrees whenever the rounds are not all equal.
    """
    if len(values) < 2:
        return False
    low, high = spread(values)
    middle = abs(statistics.median(values))
    return high > low if middle == 0 else (high - low) / middle > tolerance


WITHHELD = f"rounds differ >{NOISY:.0%}"
"""What a report prints in place of a ratio whose rounds disagree."""


def ratio_text(ratio: float | None, spec: str) -> str:
    """A report's ratio formatted with `spec` (e.g. "7.3f"), or `WITHHELD` where None."""
    return WITHHELD if ratio is None else format(ratio, spec)


def ratio_of_medians(top: Sequence[float], bottom: Sequence[float]) -> float | None:
    """median(top) / median(bottom); None where either side's rounds disagree, as then
    the ratio would say more about the machine than about the two sides."""
    if disagrees(top) or disagrees(bottom):
        return None
    return statistics.median(top) / statistics.median(bottom)


def rounds_title(rounds: int) -> str:
    """What a report's figures are: medians with their spread, or one round's."""
    return f"{rounds} rounds (medians, spread min-max)" if rounds > 1 else "1 round: no spread"


def spread_text(values: Sequence[float] | None, fmt: Callable[[float], str]) -> str:
    """`min-max` of rounds for a report; "-" without a figure or with one round, whose
    min and max would only repeat it."""
    if values is None or len(values) < 2:
        return "-"
    low, high = spread(values)
    # "-300--200" would read as a subtraction: negative figures (returns) get words.
    return f"{fmt(low)}-{fmt(high)}" if low >= 0 else f"{fmt(low)} to {fmt(high)}"


def spread_note(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    """`  (min-max)` to follow a median on a report's line; nothing after one round."""
    return f"  ({spread_text(values, fmt)})" if len(values) > 1 else ""


def machine() -> dict[str, Any]:
    """The machine as the figures saw it; a load above the CPU count means it was shared."""
    return {"cpus": os.cpu_count(), "load_average_1m": os.getloadavg()[0]}


def load_line(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """`machine()` before and after a benchmark, in words."""
    return (
        f"load average before {before['load_average_1m']:.1f}, "
        f"after {after.get('load_average_1m', float('nan')):.1f} on {before['cpus']} CPUs"
    )


def bench_parser(script: str, description: str | None) -> Parser:
    """The parser of `python scripts/<script>`: bad input is one line and exit code 2
    (rlsuite's `Parser`); `--json` prints `Result.to_json()` instead of the report."""
    parser = Parser(
        prog=f"python scripts/{script}",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    return parser


def scripts_on_path() -> dict[str, str]:
    """This process's environment with scripts/ on PYTHONPATH, for a child started as
    `python -m benchmarks.<module>` (a module of this package run as a program)."""
    paths = [str(SCRIPTS), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}


@dataclass(frozen=True)
class Child:
    """A finished child process as the benchmark saw it."""

    wall_s: float
    cpu_s: float | None
    """CPU seconds of the process and every process it started (Ray's too); None when not
    metered or without Linux's /proc."""
    stdout: str
    started_at: float
    """`time.time()` just before the start: marks that a child prints use the same clock."""

    @property
    def ended_at(self) -> float:
        return self.started_at + self.wall_s


def run_child(
    command: list[str], *, env: Mapping[str, str] | None = None, meter_cpu: bool = False
) -> Child:
    """Run `command` in the repository until it ends; RuntimeError with the end of its
    output when it fails."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started_at, start = time.time(), time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, text=True, env=env)
        meter = CpuMeter(process.pid) if meter_cpu else None
        while True:
            if meter is not None:
                meter.sample()
            try:  # returns as soon as the process ends: the wall time has no polling lag
                process.wait(timeout=CPU_SAMPLE_S if meter is not None else None)
                break
            except subprocess.TimeoutExpired:
                continue
        wall_s = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        tail = "\n".join((stdout + stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(command)} failed (exit {process.returncode}):\n{tail}")
    cpu_s = meter.seconds() if meter is not None else None
    return Child(wall_s, cpu_s, stdout, started_at)


# Ray's workers are not reaped by the process that started Ray, so getrusage misses them;
# /proc is read instead, twice a second (a process that lives less than that is missed).
CPU_SAMPLE_S = 0.5


class CpuMeter:
    """CPU seconds (user + system) of a process tree, from Linux's /proc."""

    def __init__(self, root_pid: int) -> None:
        self.root_pid = root_pid
        self.ticks_per_s = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._last: dict[tuple[int, int], int] = {}  # (pid, start time) -> CPU ticks
        self.available = Path("/proc/self/stat").exists()

    def sample(self) -> None:
        if not self.available:
            return
        stats = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # the process ended meanwhile
            # After the name: state, ppid (1), ... utime (11), stime (12), ... start (19).
            stats[int(stat.parent.name)] = (
                int(fields[1]),
                int(fields[11]) + int(fields[12]),
                int(fields[19]),
            )
        tree = {self.root_pid}
        for pid in sorted(stats, key=lambda pid: stats[pid][2]):  # parents start first
            if stats[pid][0] in tree:
                tree.add(pid)
        for pid in tree & stats.keys():
            self._last[(pid, stats[pid][2])] = stats[pid][1]

    def seconds(self) -> float | None:
        if not self.available:
            return None
        return sum(self._last.values()) / self.ticks_per_s
