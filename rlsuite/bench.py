"""Single-agent throughput: each case runs a plain-RLlib baseline and the suite's
experiment for the same env steps, in one run, each in a fresh process like a user's.

The figures to read are the ratios (suite over baseline for rates, baseline over suite for
times): both sides see the same machine noise when they run back to back, or alternate
over `rounds` (medians). Baselines are in `rlsuite/bench_baselines.py`.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlsuite import metrics
from rlsuite.process_cpu import run_measured

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    experiment: str | None
    """File in experiments/ that is the suite's side; None: the baseline's own config run
    by rlsuite (`bench_baselines.with_rlsuite_machinery`), to compare at equal learning."""
    env_steps: int
    """Default budget of env steps for both sides."""
    target_return: float | None = None
    """Time-to-return cases stop (both sides) at the first mean return this high."""
    suite_flags: tuple[str, ...] = ()
    """`rlsuite.run` flags that make the suite's side comparable, each with its reason."""


CASES: dict[str, Case] = {
    "ppo_atari": Case("ppo_atari.py", 20_000),
    "ppo_atari_same_settings": Case(None, 20_000),
    "dqn_atari": Case(
        "dqn_atari.py",
        10_000,
        # Rainbow starts learning after 20k steps; start where RLlib's default does, so both
        # sides learn within the budget.
        suite_flags=("--set", "training.num_steps_sampled_before_learning_starts=1000"),
    ),
    "ppo_cartpole": Case("ppo_cartpole.py", 500_000, target_return=450),
    "sac_pendulum": Case("sac_pendulum.py", 20_000, target_return=-250),
}


@dataclass(frozen=True)
class Side:
    """What one side did: counters and times of its last result, and the return target."""

    env_steps: float
    learner_samples: float
    train_s: float
    """Seconds inside training iterations (Tune's `time_total_s`): sampling and learning."""
    wall_s: float
    """Seconds of the whole process: start-up, Ray, building the algorithm, training."""
    final_return: float | None
    time_to_return_s: float | None
    """Training seconds at the first result whose mean return reached the target."""
    cpu_s: float | None = None
    """CPU seconds of every process of the run, start-up included: unlike wall time, what
    other users of a shared machine take does not inflate it."""

    @property
    def env_steps_per_s(self) -> float:
        return self.env_steps / self.train_s

    @property
    def learner_samples_per_s(self) -> float:
        return self.learner_samples / self.train_s

    @property
    def cpu_ms_per_env_step(self) -> float | None:
        return None if self.cpu_s is None else 1000 * self.cpu_s / self.env_steps


@dataclass(frozen=True)
class CaseResult:
    case: str
    env_steps: int
    target_return: float | None
    command: str
    baseline: list[Side] = field(default_factory=list)
    suite: list[Side] = field(default_factory=list)

    def median(self, side: str, name: str) -> float | None:
        runs = self.baseline if side == "baseline" else self.suite
        values = [getattr(run, name) for run in runs]
        if any(value is None for value in values):
            return None  # a round that missed the target: no time to report
        return float(statistics.median(values))

    def ratios(self) -> dict[str, float | None]:
        """Speed-ups of the suite over the baseline; >1 means the suite is faster."""
        faster_when_higher = ("env_steps_per_s", "learner_samples_per_s")
        faster_when_lower = ("train_s", "wall_s", "time_to_return_s", "cpu_ms_per_env_step")
        ratios: dict[str, float | None] = {}
        for name in faster_when_higher + faster_when_lower:
            base, suite = self.median("baseline", name), self.median("suite", name)
            if base is None or suite is None or min(base, suite) <= 0:
                ratios[name] = None
            elif name in faster_when_higher:
                ratios[name] = suite / base
            else:
                ratios[name] = base / suite
        return ratios

    def report(self) -> str:
        target = f" or a return of {self.target_return:g}" if self.target_return is not None else ""
        lines = [
            f"{self.case}: {self.env_steps:,} env steps{target}, {len(self.suite)} round(s)",
            f"  {'':24}{'RLlib default':>14}{'rlsuite':>12}{'speed-up':>10}",
        ]
        ratios = self.ratios()
        for name, label in ROWS:
            base, suite = self.median("baseline", name), self.median("suite", name)
            ratio = ratios.get(name)
            lines.append(
                f"  {label:24}{_fmt(base):>14}{_fmt(suite):>12}"
                f"{'' if ratio is None else f'{ratio:.2f}x':>10}"
            )
        lines.append(f"  command: {self.command}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        sides = {
            side: [{**asdict(run), **_rates(run)} for run in runs]
            for side, runs in (("baseline", self.baseline), ("suite", self.suite))
        }
        return {
            "case": self.case,
            "env_steps": self.env_steps,
            "target_return": self.target_return,
            "command": self.command,
            **sides,
            "speed_up": self.ratios(),
        }


ROWS = (
    ("env_steps_per_s", "env steps/s"),
    ("learner_samples_per_s", "learner samples/s"),
    ("train_s", "training s"),
    ("wall_s", "wall s"),
    ("time_to_return_s", "training s to the return"),
    ("cpu_ms_per_env_step", "CPU ms per env step"),
    ("final_return", "last mean return"),
)


def lookup(row: dict[str, Any], key: str) -> Any:
    """A flattened result key (`env_runners/episode_return_mean`) in a nested result."""
    value: Any = row
    for part in key.split("/"):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def summarize(
    rows: list[dict[str, Any]], target: float | None, wall_s: float, cpu_s: float | None = None
) -> Side:
    """One side's figures from its results, in order (Tune's result.json lines)."""
    if not rows:
        raise RuntimeError("the run wrote no results")
    last = rows[-1]
    reached = None
    if target is not None:
        reached = next(
            (
                float(row[metrics.TIME_TOTAL_S])
                for row in rows
                if (lookup(row, metrics.EPISODE_RETURN_MEAN) or -float("inf")) >= target
            ),
            None,
        )
    final_return = lookup(last, metrics.EPISODE_RETURN_MEAN)
    return Side(
        env_steps=float(lookup(last, metrics.ENV_STEPS_SAMPLED_LIFETIME) or 0),
        learner_samples=float(lookup(last, metrics.MODULE_STEPS_TRAINED_LIFETIME) or 0),
        train_s=float(last[metrics.TIME_TOTAL_S]),
        wall_s=wall_s,
        final_return=None if final_return is None else float(final_return),
        time_to_return_s=reached,
        cpu_s=cpu_s,
    )


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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
    print(f"{case} {side_name}: {json.dumps({**asdict(side), **_rates(side)})}", file=sys.stderr)


def run_baseline(case: str, env_steps: int, smoke: bool) -> Side:
    with tempfile.TemporaryDirectory() as out:
        rows_file = Path(out) / "result.json"
        wall_s, cpu_s = run_measured(
            _baseline_command(case, env_steps, str(rows_file), smoke), ROOT
        )
        return summarize(read_rows(rows_file), CASES[case].target_return, wall_s, cpu_s)


def run_suite(case: str, env_steps: int, smoke: bool) -> Side:
    spec = CASES[case]
    with tempfile.TemporaryDirectory() as out:
        if spec.experiment is None:
            command = [*_baseline_command(case, env_steps, out, smoke), "rlsuite"]
        else:
            command = [*_suite_command(spec, env_steps, smoke), "--storage-path", out]
            command += ["--name", case]
        wall_s, cpu_s = run_measured(command, ROOT)
        (rows_file,) = Path(out).glob(f"{case}/*/result.json")
        return summarize(read_rows(rows_file), spec.target_return, wall_s, cpu_s)


def _baseline_command(case: str, env_steps: int, out: str, smoke: bool) -> list[str]:
    target = CASES[case].target_return
    return [
        sys.executable,
        "-m",
        "rlsuite.bench_baselines",
        case,
        str(env_steps),
        "none" if target is None else str(target),
        out,
        "smoke" if smoke else "full",
    ]


def _suite_command(spec: Case, env_steps: int, smoke: bool) -> list[str]:
    assert spec.experiment is not None
    command = [sys.executable, "-m", "rlsuite.run", str(ROOT / "experiments" / spec.experiment)]
    if smoke:
        command.append("--smoke")  # smoke's own stop: two iterations
    else:
        command += ["--stop", f"env_steps={env_steps}"]
        if spec.target_return is not None:
            command += ["--stop", f"episode_return_mean={spec.target_return}"]
    return command + list(spec.suite_flags)


def machine() -> dict[str, Any]:
    """The machine as the figures saw it; a load above the CPU count means it was shared."""
    return {"cpus": os.cpu_count(), "load_average_1m": os.getloadavg()[0]}


def _rates(side: Side) -> dict[str, float | None]:
    return {
        "env_steps_per_s": side.env_steps_per_s,
        "learner_samples_per_s": side.learner_samples_per_s,
        "cpu_ms_per_env_step": side.cpu_ms_per_env_step,
    }


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}"


__all__ = ["CASES", "CaseResult", "Side", "lookup", "machine", "measure", "summarize"]
