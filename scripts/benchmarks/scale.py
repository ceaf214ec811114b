"""Atari at scale: env steps per second of the suite's PPO and APPO on Pong as env runners
(and a GPU learner) are added, each configuration a fresh `python -m rlsuite.run` process.

Each run trains `ppo_atari.py` or `appo_atari.py` to an env-step budget with the scaling
flags a user gives (`--num-env-runners R`, `--num-gpus-per-learner G`). The rate to read
is the steady one: env steps between the first result and the last over the training
seconds between them, so the first iteration (building the learner, first weights sync,
CUDA's start) does not count; the whole-run rate is printed beside it. Algorithms
alternate within each round, so both see the same machine noise; medians over rounds.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import (
    EXPERIMENTS,
    load_line,
    machine,
    rounds_title,
    run_child,
    spread_text,
)
from rlsuite import metrics
from rlsuite.results import lookup, read_results

EXPERIMENT_FILES = {
    "ppo": "ppo_atari.py",
    "ppo-overlapped": "ppo_atari.py",
    "appo": "appo_atari.py",
}
ALGO_FLAGS = {"ppo-overlapped": ["--set", "training.overlap_sampling=True"]}
"""What makes an algorithm of an experiment file: PPO with its runners sampling while the
learner learns (rlsuite/rl/overlapped_ppo.py)."""


@dataclass(frozen=True)
class ScaleRun:
    """One training run's rates and where its iterations' time went."""

    env_steps: float
    train_s: float
    steady_env_steps_per_s: float | None
    """Env steps per training second after the first result; None with one result only."""
    learner_samples_per_s: float | None
    """Rows through the learner's updates per training second after the first result
    (every epoch counted), the same count for PPO and APPO."""
    sampling_s: float | None
    """RLlib's smoothed seconds per iteration spent sampling (PPO; APPO samples async;
    overlapped PPO: the wait for the requests in flight, much of which falls into RLlib's
    connector-state gather after its training step instead)."""
    learning_s: float | None
    """RLlib's smoothed seconds per iteration in the learner update (PPO; APPO's learner
    updates in its own thread, so its timer reads only the hand-over)."""
    iteration_s: float
    wall_s: float
    final_return: float | None

    @property
    def env_steps_per_s(self) -> float:
        return self.env_steps / self.train_s

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "env_steps_per_s": self.env_steps_per_s}


def summarize(rows: list[dict[str, Any]], wall_s: float) -> ScaleRun:
    if not rows:
        raise RuntimeError("the run wrote no results")
    first, last = rows[0], rows[-1]
    steps = float(lookup(last, metrics.ENV_STEPS_SAMPLED_LIFETIME) or 0)
    train_s = float(last[metrics.TIME_TOTAL_S])
    steady = learned = None
    if len(rows) > 1:
        span_s = train_s - float(first[metrics.TIME_TOTAL_S])
        steady = (steps - _counter(first, metrics.ENV_STEPS_SAMPLED_LIFETIME)) / span_s
        learned = (
            _counter(last, metrics.MODULE_STEPS_TRAINED_LIFETIME)
            - _counter(first, metrics.MODULE_STEPS_TRAINED_LIFETIME)
        ) / span_s
    final_return = lookup(last, metrics.EPISODE_RETURN_MEAN)
    return ScaleRun(
        env_steps=steps,
        train_s=train_s,
        steady_env_steps_per_s=steady,
        learner_samples_per_s=learned,
        sampling_s=_float(lookup(last, metrics.SAMPLING_TIME_S)),
        learning_s=_float(lookup(last, metrics.LEARNING_TIME_S)),
        iteration_s=train_s / float(last[metrics.TRAINING_ITERATION]),
        wall_s=wall_s,
        final_return=_float(final_return),
    )


def _counter(row: dict[str, Any], key: str) -> float:
    return float(lookup(row, key) or 0)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class Setting:
    algo: str
    env_runners: int
    gpus_per_learner: float

    def label(self) -> str:
        gpu = f", {self.gpus_per_learner:g} GPU learner" if self.gpus_per_learner else ""
        return f"{self.algo.upper()} {self.env_runners} env runner(s){gpu}"


@dataclass
class ScaleResult:
    env_steps: int
    command: str
    machine_before: dict[str, Any]
    runs: dict[Setting, list[ScaleRun]] = field(default_factory=dict)
    machine_after: dict[str, Any] = field(default_factory=dict)

    def median(self, setting: Setting, name: str) -> float | None:
        values = [getattr(run, name) for run in self.runs[setting]]
        if not values or any(value is None for value in values):
            return None
        return float(statistics.median(values))

    def spread(self, setting: Setting) -> str:
        values = [run.steady_env_steps_per_s or run.env_steps_per_s for run in self.runs[setting]]
        return spread_text(values, lambda value: f"{value:,.0f}")

    def report(self) -> str:
        header = f"  {'':40}{'steady/s':>10}{'spread':>14}{'whole/s':>9}{'learner/s':>11}"
        rounds = max((len(runs) for runs in self.runs.values()), default=0)
        title = f"Atari Pong, {self.env_steps:,} env steps per run, {rounds_title(rounds)}"
        lines = [title, header]
        for setting in self.runs:
            lines.append(
                f"  {setting.label():40}{_fmt(self.median(setting, 'steady_env_steps_per_s')):>10}"
                f"{self.spread(setting):>14}{_fmt(self.median(setting, 'env_steps_per_s')):>9}"
                f"{_fmt(self.median(setting, 'learner_samples_per_s')):>11}"
                f"   iteration {_fmt(self.median(setting, 'iteration_s'))} s, sampling "
                f"{_fmt(self.median(setting, 'sampling_s'))} s, learning "
                f"{_fmt(self.median(setting, 'learning_s'))} s"
            )
        lines.append(f"  {load_line(self.machine_before, self.machine_after)}")
        lines.append(f"  command: {self.command}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "env_steps": self.env_steps,
            "command": self.command,
            "machine_before": self.machine_before,
            "machine_after": self.machine_after,
            "runs": [
                {**asdict(setting), "rounds": [run.to_json() for run in runs]}
                for setting, runs in self.runs.items()
            ],
        }


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"


def run_one(setting: Setting, env_steps: int, extra: list[str]) -> ScaleRun:
    experiment = EXPERIMENTS / EXPERIMENT_FILES[setting.algo]
    with tempfile.TemporaryDirectory() as out:
        command = [
            sys.executable,
            "-m",
            "rlsuite.run",
            str(experiment),
            "--quiet",
            "--stop",
            f"env_steps={env_steps}",
            "--num-env-runners",
            str(setting.env_runners),
            "--storage-path",
            out,
            "--name",
            "scale",
            *ALGO_FLAGS.get(setting.algo, []),
            *extra,
        ]
        if setting.gpus_per_learner:
            command += ["--num-gpus-per-learner", f"{setting.gpus_per_learner:g}"]
        child = run_child(command)
        (rows_file,) = Path(out).glob("scale/*/result.json")
        return summarize(read_results(rows_file), child.wall_s)


def measure(
    algos: list[str],
    env_runners: list[int],
    env_steps: int,
    gpus_per_learner: float = 0,
    rounds: int = 1,
    extra: list[str] | None = None,
    command: str = "",
) -> ScaleResult:
    result = ScaleResult(env_steps, command, machine())
    settings = [Setting(a, r, gpus_per_learner) for r in env_runners for a in algos]
    for setting in settings:
        result.runs[setting] = []
    for _ in range(rounds):
        for setting in settings:
            run = run_one(setting, env_steps, extra or [])
            result.runs[setting].append(run)
            print(f"{setting.label()}: {run.to_json()}", file=sys.stderr, flush=True)
    result.machine_after = machine()
    return result
