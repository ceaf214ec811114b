"""What the launcher costs: the same PPO CartPole run through `rlsuite.run` and as a
hand-written RLlib script, each a fresh process, for the same iterations and checkpoints,
and where each side's seconds go.

Both sides run in one invocation, alternating, so machine noise hits both alike; the
figure to read is the ratio of medians. Each side prints a mark (`BENCH_MARK name time`)
on its stdout where one phase ends and the next begins: the hand-written script in its
own code, `rlsuite.run` through a wrapper that calls its `main` as `python -m` does and
marks the calls into Ray and Tune (`ray.init`, `Tuner.fit`, each result Tune receives).
The marks cost a print each; the phases between them are in `PHASES`.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from benchmarks.common import (
    EXPERIMENTS,
    Child,
    load_line,
    machine,
    ratio_of_medians,
    ratio_text,
    rounds_title,
    run_child,
    spread,
    spread_note,
)
from benchmarks.overhead_programs import HAND_WRITTEN, MARK, SUITE

EXPERIMENT = EXPERIMENTS / "ppo_cartpole.py"


@dataclass(frozen=True)
class Phase:
    label: str
    ends_at: str
    """The mark that ends it; a side without that mark has no such phase, and its time
    goes to the next phase that it has."""
    holds: str
    """What it holds: the hand-written side | rlsuite.run."""


ITERATION = "iteration"  # one mark per result, with the iteration's `time_this_iter_s`
TRAINING = "training iterations"
BETWEEN = "between iterations"
PHASES = (
    Phase(
        "interpreter, imports",
        "imported",
        "Python, ray, rlsuite's env registry and loader | Python, rlsuite.run and its imports",
    ),
    Phase(
        "experiment file, checks",
        "ray_init_start",
        "load ppo_cartpole.py | load it, apply the flags, check",
    ),
    Phase("ray.init", "ray_init_end", "a local Ray | a local Ray with the warm-up hook"),
    Phase("Tuner set-up", "fit_start", "- | param space, Tuner"),
    Phase(
        "algorithm start",
        "first_iteration_start",
        "build_algo() here | Tune starts, the trial's actor starts and builds the algorithm",
    ),
    # Split into TRAINING (Tune's time_this_iter_s) and BETWEEN (the rest).
    Phase(
        "iterations",
        "last_iteration_end",
        "algo.train(), checkpoints between | the same in the trial's actor, Tune's handling of each result",
    ),
    Phase(
        "after the last iteration",
        "stopped",
        "last checkpoint, algo.stop() | last checkpoint, trial stop, Tune's end",
    ),
    Phase("summary", "summary_done", "- | summary lines and summary.json"),
    Phase(
        "shutdown, exit",
        "exited",
        "ray.shutdown(), Python exit | Ray's shutdown at exit, Python exit",
    ),
)
ROWS = tuple(
    label
    for phase in PHASES
    for label in ((TRAINING, BETWEEN) if phase.label == "iterations" else (phase.label,))
)


@dataclass(frozen=True)
class Mark:
    name: str
    time: float
    """`time.time()` in the child: the parent's clock."""
    value: float | None = None


def parse_marks(stdout: str) -> list[Mark]:
    marks = []
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == MARK:
            value = float(parts[3]) if len(parts) > 3 else None
            marks.append(Mark(parts[1], float(parts[2]), value))
    return marks


def phases(marks: list[Mark], started_at: float, ended_at: float) -> dict[str, float]:
    """Seconds of each phase of one run (`ROWS` order), from its start to its exit."""
    at = {mark.name: mark.time for mark in marks if mark.name != ITERATION}
    iterations = [mark for mark in marks if mark.name == ITERATION]
    training = sum(mark.value or 0.0 for mark in iterations)
    if iterations:
        at["first_iteration_start"] = iterations[0].time - (iterations[0].value or 0.0)
        at["last_iteration_end"] = iterations[-1].time
    at["exited"] = ended_at
    seconds: dict[str, float] = {}
    previous = started_at
    for phase in PHASES:
        if phase.ends_at in at:
            seconds[phase.label] = at[phase.ends_at] - previous
            previous = at[phase.ends_at]
    if "iterations" in seconds:
        seconds[BETWEEN] = seconds.pop("iterations") - training
        seconds[TRAINING] = training
    return {row: seconds[row] for row in ROWS if row in seconds}


def _phases_of(child: Child) -> dict[str, float]:
    return phases(parse_marks(child.stdout), child.started_at, child.ended_at)


@dataclass(frozen=True)
class OverheadResult:
    iterations: int
    rounds: int
    rlsuite_s: list[float]
    rllib_s: list[float]
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]
    rlsuite_phases: list[dict[str, float]] = field(default_factory=list)
    """Seconds per phase (`ROWS`), one dict per round."""
    rllib_phases: list[dict[str, float]] = field(default_factory=list)
    checkpoint_every: int = 5

    @property
    def ratio(self) -> float | None:
        """Median wall times, rlsuite / RLlib; None where a side's rounds disagree."""
        return ratio_of_medians(self.rlsuite_s, self.rllib_s)

    def report(self) -> str:
        ratio = ratio_text(self.ratio, "7.3f")
        lines = [
            f"PPO CartPole, {self.iterations} iterations, checkpoints every {self.checkpoint_every}, "
            f"wall time, {rounds_title(self.rounds)}:",
            f"  hand-written RLlib script  {_median(self.rllib_s):7.1f} s{spread_note(self.rllib_s, _fmt)}",
            f"  python -m rlsuite.run      {_median(self.rlsuite_s):7.1f} s{spread_note(self.rlsuite_s, _fmt)}",
            f"  ratio rlsuite / RLlib      {ratio}  (goal <= 1.05)",
            f"  {load_line(self.machine_before, self.machine_after)}",
        ]
        if self.rllib_phases and self.rlsuite_phases:
            lines += self._phase_table()
        return "\n".join(lines)

    def _phase_table(self) -> list[str]:
        rllib, suite = _medians(self.rllib_phases), _medians(self.rlsuite_phases)
        lines = [
            "where the time goes, seconds (median of each phase over the rounds):",
            f"  {'':26}{'hand-written':>14}{'rlsuite.run':>13}{'difference':>12}",
        ]
        totals = ("total (median wall time)", _median(self.rllib_s), _median(self.rlsuite_s))
        for row, base, other in [(row, rllib.get(row), suite.get(row)) for row in ROWS] + [totals]:
            difference = "" if base is None or other is None else f"{other - base:+.1f}"
            line = f"  {row:26}{_fmt(base):>14}{_fmt(other):>13}{difference:>12}"
            lines.append(line.rstrip())
        lines.append("what each phase holds (hand-written | rlsuite.run):")
        for phase in PHASES:
            label = f"{TRAINING}, {BETWEEN}" if phase.label == "iterations" else phase.label
            lines.append(f"  {label}: {phase.holds}")
        return lines

    def to_json(self) -> dict[str, Any]:
        medians = {"rllib": _medians(self.rllib_phases), "rlsuite": _medians(self.rlsuite_phases)}
        spreads = {"rlsuite_s": spread(self.rlsuite_s), "rllib_s": spread(self.rllib_s)}
        # The ratio is null only where rounds disagree: `noisy` says so for a reader of JSON.
        noisy = {"noisy": self.ratio is None, "spread": spreads}
        return {**asdict(self), "ratio": self.ratio, **noisy, "phase_medians": medians}


def measure(iterations: int, rounds: int, checkpoint_every: int = 5) -> OverheadResult:
    result = OverheadResult(iterations, rounds, [], [], machine(), {}, [], [], checkpoint_every)
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as out:
            args = [str(iterations), str(checkpoint_every), out, str(EXPERIMENT)]
            child = run_child([sys.executable, "-c", HAND_WRITTEN, *args])
        result.rllib_s.append(child.wall_s)
        result.rllib_phases.append(_phases_of(child))
        with tempfile.TemporaryDirectory() as out:
            args = [str(EXPERIMENT), "--stop", f"training_iteration={iterations}"]
            args += ["--checkpoint-every", str(checkpoint_every), "--storage-path", out]
            child = run_child([sys.executable, "-c", SUITE, *args])
        result.rlsuite_s.append(child.wall_s)
        result.rlsuite_phases.append(_phases_of(child))
    return replace(result, machine_after=machine())


def _medians(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Per phase, the median over the rounds that have it."""
    return {
        row: statistics.median([r[row] for r in rounds if row in r])
        for row in ROWS
        if any(row in r for r in rounds)
    }


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
