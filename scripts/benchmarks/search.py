"""Searchers against random search on one fixed budget of trials, measured in one run.

Every method searches `optuna_ppo_cartpole.py`'s space (lr, entropy_coeff, clip_param,
minibatch_size) for the same number of trials, each trained for the same number of
iterations (4,000 env steps each); a trial's score is its mean return at that budget.
Per method and repetition: the best score found, the trials (in the order they finished)
until one reached the threshold, and the sweep's wall time. Each sweep is a fresh process
through `rlsuite.launch`, like a user's run; repetition r seeds the searchers with r.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import EXPERIMENTS, run_child
from rlsuite.reporting import runs, sweep

EXPERIMENT = EXPERIMENTS / "optuna_ppo_cartpole.py"
METHODS = ("random", "optuna", "bohb", "hyperopt")

# One sweep: the experiment with the method's searcher, its budget and its seed.
RUN_SWEEP = """
import dataclasses, json, sys
import rlsuite
from rlsuite import metrics
from rlsuite.launcher.loader import load_experiment
method, trials, iterations, seed, random_starts, out = json.loads(sys.argv[1])
experiment = load_experiment(sys.argv[2])
searchers = {
    "random": None,
    "optuna": rlsuite.Optuna(seed=seed, random_starts=random_starts),
    "bohb": rlsuite.BOHB(seed=seed),
    "hyperopt": rlsuite.HyperOpt(seed=seed, random_starts=random_starts),
}
experiment = dataclasses.replace(
    experiment,
    searcher=searchers[method],
    num_samples=trials,
    stop={metrics.TRAINING_ITERATION: iterations},
    checkpoint_every=iterations,
)
run = rlsuite.launch(experiment, name=method, storage_path=out, max_concurrent_trials=2)
sys.exit(1 if run.failed else 0)
"""


@dataclass(frozen=True)
class Sweep:
    """One method's sweep."""

    method: str
    repetition: int
    scores: list[float]
    """Each trial's score, in the order the trials finished."""
    wall_s: float

    def best(self) -> float:
        finite = [s for s in self.scores if math.isfinite(s)]
        return max(finite) if finite else math.nan

    def trials_to(self, threshold: float) -> int | None:
        """Trials finished until the first reached `threshold`; None if none did."""
        return next((i + 1 for i, s in enumerate(self.scores) if s >= threshold), None)


@dataclass(frozen=True)
class SearchBench:
    trials: int
    iterations: int
    threshold: float
    sweeps: list[Sweep]

    def report(self) -> str:
        lines = [
            f"PPO CartPole, {self.trials} trials x {self.iterations} iterations "
            f"({self.iterations * 4000:,} env steps) per sweep; threshold {self.threshold:g}",
            f"{'method':<10} {'rep':>3} {'best':>8} {'trials to threshold':>20} {'wall (s)':>9}",
        ]
        for s in self.sweeps:
            reached = s.trials_to(self.threshold)
            lines.append(
                f"{s.method:<10} {s.repetition:>3} {s.best():8.1f} "
                f"{reached if reached is not None else 'not reached':>20} {s.wall_s:9.1f}"
            )
        lines.append("median over repetitions:")
        for method in dict.fromkeys(s.method for s in self.sweeps):
            mine = [s for s in self.sweeps if s.method == method]
            lines.append(
                f"  {method:<10} best {_median([s.best() for s in mine]):7.1f}  "
                f"wall {_median([s.wall_s for s in mine]):7.1f} s  reached the threshold in "
                f"{sum(s.trials_to(self.threshold) is not None for s in mine)} of {len(mine)}"
            )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for sweep_data, s in zip(data["sweeps"], self.sweeps, strict=True):
            sweep_data["best"] = s.best()
            sweep_data["trials_to_threshold"] = s.trials_to(self.threshold)
        return data


def measure(
    methods: list[str],
    trials: int,
    iterations: int,
    repetitions: int,
    threshold: float,
    random_starts: int,
) -> SearchBench:
    sweeps = [
        run_sweep(method, trials, iterations, repetition, random_starts)
        for repetition in range(repetitions)
        for method in methods
    ]
    return SearchBench(trials, iterations, threshold, sweeps)


def run_sweep(
    method: str, trials: int, iterations: int, repetition: int, random_starts: int
) -> Sweep:
    with tempfile.TemporaryDirectory() as out:
        spec = json.dumps([method, trials, iterations, repetition, random_starts, out])
        child = run_child([sys.executable, "-c", RUN_SWEEP, spec, str(EXPERIMENT)])
        config = runs.load(Path(out) / method)
        scores = [sweep.last_value(t, config.metric) for t in sweep.finish_order(config)]
    return Sweep(method, repetition, scores, child.wall_s)


def _median(values: list[float]) -> float:
    finite = sorted(v for v in values if math.isfinite(v))
    if not finite:
        return math.nan
    middle = len(finite) // 2
    return finite[middle] if len(finite) % 2 else (finite[middle - 1] + finite[middle]) / 2
