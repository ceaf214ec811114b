"""Single-agent throughput: each case runs a plain-RLlib baseline and the suite's
experiment for the same env steps, in one run, each in a fresh process like a user's.

The figures to read are the ratios (suite over baseline for rates, baseline over suite for
times): both sides see the same machine noise when they run back to back, or alternate
over `rounds` (medians). The cases are in `cases.py`, the baselines in `baselines.py`.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.cases import CASES, Case
from benchmarks.common import (
    EXPERIMENTS,
    WITHHELD,
    disagrees,
    load_line,
    rounds_title,
    run_child,
    scripts_on_path,
    spread,
    spread_text,
)
from benchmarks.side import Side, summarize
from rlsuite.results import read_results

ROWS = (
    ("env_steps_per_s", "env steps/s"),
    ("learner_samples_per_s", "learner samples/s"),
    ("train_s", "training s"),
    ("wall_s", "wall s"),
    ("time_to_return_s", "training s to the return"),
    ("cpu_ms_per_env_step", "CPU ms per env step"),
    ("final_return", "last mean return"),
)


@dataclass(frozen=True)
class CaseResult:
    case: str
    env_steps: int
    target_return: float | None
    command: str
    baseline: list[Side] = field(default_factory=list)
    suite: list[Side] = field(default_factory=list)

    def values(self, side: str, name: str) -> list[float] | None:
        """One side's figure over rounds; None when a round has none (it missed the target)."""
        runs = self.baseline if side == "baseline" else self.suite
        values = [getattr(run, name) for run in runs]
        if not values or any(value is None for value in values):
            return None
        return [float(value) for value in values]

    def median(self, side: str, name: str) -> float | None:
        values = self.values(side, name)
        return None if values is None else float(statistics.median(values))

    def spread(self, side: str, name: str) -> tuple[float, float] | None:
        values = self.values(side, name)
        return None if values is None else spread(values)

    def noisy(self, name: str) -> bool:
        """Whether either side's rounds of this figure differ by more than 25% (`disagrees`)."""
        sides = (self.values("baseline", name), self.values("suite", name))
        return any(values is not None and disagrees(values) for values in sides)

    def ratios(self) -> dict[str, float | None]:
        """Speed-ups of the suite over the baseline; >1 means the suite is faster. None where
        a side has no figure or its rounds are too far apart for a ratio to mean anything."""
        faster_when_higher = ("env_steps_per_s", "learner_samples_per_s")
        faster_when_lower = ("train_s", "wall_s", "time_to_return_s", "cpu_ms_per_env_step")
        ratios: dict[str, float | None] = {}
        for name in faster_when_higher + faster_when_lower:
            base, suite = self.median("baseline", name), self.median("suite", name)
            if base is None or suite is None or min(base, suite) <= 0 or self.noisy(name):
                ratios[name] = None
            elif name in faster_when_higher:
                ratios[name] = suite / base
            else:
                ratios[name] = base / suite
        return ratios

    def report(self) -> str:
        target = f" or a return of {self.target_return:g}" if self.target_return is not None else ""
        rounds = len(self.suite)
        # One round has no spread: its columns would repeat the figure, so they are left out.
        spreads = rounds > 1
        title = rounds_title(rounds)
        # Wide enough for "11,126-11,186" and a gap: 13 ran it into the median beside it.
        col = f"{'spread':>17}" if spreads else ""
        header = f"  {'':24}{'RLlib default':>14}{col}{'rlsuite':>12}{col}{'speed-up':>10}"
        lines = [f"{self.case}: {self.env_steps:,} env steps{target}, {title}", header]
        ratios = self.ratios()
        for name, label in ROWS:
            line, found = f"  {label:24}", True
            for side, width in (("baseline", 14), ("suite", 12)):
                median = self.median(side, name)
                found = found and median is not None
                line += f"{_fmt(median):>{width}}"
                if spreads:
                    line += f"{spread_text(self.values(side, name), _fmt):>17}"
            ratio = ratios.get(name)
            if ratio is not None:
                line += f"{ratio:>9.2f}x"
            elif name in ratios and found and self.noisy(name):
                line += f"  {WITHHELD}"  # the ratio withheld, and why
            lines.append(line.rstrip())
        lines.append(f"  command: {self.command}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        names = [name for name, _ in ROWS]
        return {
            "case": self.case,
            "env_steps": self.env_steps,
            "target_return": self.target_return,
            "command": self.command,
            "baseline": [run.to_json() for run in self.baseline],
            "suite": [run.to_json() for run in self.suite],
            "spread": {
                side: {name: self.spread(side, name) for name in names}
                for side in ("baseline", "suite")
            },
            # Why a speed-up is null: rounds more than 25% apart, not a missing figure.
            "noisy": {name: self.noisy(name) for name in names},
            "speed_up": self.ratios(),
        }


@dataclass(frozen=True)
class ThroughputRun:
    """Every case of one invocation, and the machine's load before and after it."""

    cases: list[CaseResult]
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]

    def machine_line(self) -> str:
        return load_line(self.machine_before, self.machine_after)

    def report(self) -> str:
        return "\n".join([*(case.report() for case in self.cases), self.machine_line()])

    def to_json(self) -> dict[str, Any]:
        return {
            "machine_before": self.machine_before,
            "machine_after": self.machine_after,
            "cases": [case.to_json() for case in self.cases],
        }


def command_line(case: str, env_steps: int, rounds: int, smoke: bool = False) -> str:
    command = f"python scripts/bench.py --case {case} --env-steps {env_steps} --rounds {rounds}"
    return command + " --smoke" if smoke else command


def measure(
    case: str, env_steps: int | None = None, rounds: int = 1, smoke: bool = False
) -> CaseResult:
    """Baseline then suite, `rounds` times, each a fresh process."""
    spec = CASES[case]
    steps = env_steps or spec.env_steps
    command = command_line(case, steps, rounds, smoke)
    result = CaseResult(case, steps, spec.target_return, command)
    for _ in range(rounds):
        result.baseline.append(run_baseline(case, steps, smoke))
        _log(case, "RLlib default", result.baseline[-1])
        result.suite.append(run_suite(case, steps, smoke))
        _log(case, "rlsuite", result.suite[-1])
    return result


def _log(case: str, side_name: str, side: Side) -> None:
    """Each side's figures on stderr as soon as they exist: long runs lose nothing when
    the other side fails."""
    print(f"{case} {side_name}: {json.dumps(side.to_json())}", file=sys.stderr)


def run_baseline(case: str, env_steps: int, smoke: bool) -> Side:
    with tempfile.TemporaryDirectory() as out:
        rows_file = Path(out) / "result.json"
        command = _baseline_command(case, env_steps, str(rows_file), smoke)
        child = run_child(command, env=scripts_on_path(), meter_cpu=True)
        rows = read_results(rows_file)
        return summarize(rows, CASES[case].target_return, child.wall_s, child.cpu_s)


def run_suite(case: str, env_steps: int, smoke: bool) -> Side:
    spec = CASES[case]
    with tempfile.TemporaryDirectory() as out:
        if spec.experiment is None:
            command = [*_baseline_command(case, env_steps, out, smoke), "rlsuite"]
            child = run_child(command, env=scripts_on_path(), meter_cpu=True)
        else:
            command = [*_suite_command(spec, env_steps, smoke), "--storage-path", out]
            child = run_child([*command, "--name", case], meter_cpu=True)
        (rows_file,) = Path(out).glob(f"{case}/*/result.json")
        return summarize(read_results(rows_file), spec.target_return, child.wall_s, child.cpu_s)


def _baseline_command(case: str, env_steps: int, out: str, smoke: bool) -> list[str]:
    target = CASES[case].target_return
    return [
        sys.executable,
        "-m",
        "benchmarks.baselines",
        case,
        str(env_steps),
        "none" if target is None else str(target),
        out,
        "smoke" if smoke else "full",
    ]


def _suite_command(spec: Case, env_steps: int, smoke: bool) -> list[str]:
    assert spec.experiment is not None
    command = [sys.executable, "-m", "rlsuite.run", str(EXPERIMENTS / spec.experiment)]
    if smoke:
        command.append("--smoke")  # smoke's own stop: two iterations
    else:
        command += ["--stop", f"env_steps={env_steps}"]
        if spec.target_return is not None:
            command += ["--stop", f"episode_return_mean={spec.target_return}"]
    return command + list(spec.suite_flags)


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}"
