"""What PBT costs, and how sampling scales with env runners, measured in one run.

1. The same population (pbt_ppo_cartpole.py) for the same iterations with its PBT
   scheduler and without any: PBT's exploits restore checkpoints and restart trials,
   which is the overhead to read (goal: wall-time ratio at most 1.10).
2. PPO CartPole env steps per second with 1, 2, ... env runners.
Each run is a fresh process, like a user's.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import EXPERIMENTS, load_line, machine, rounds_title, run_child
from rlsuite import metrics
from rlsuite.results import lookup, read_results

PBT_EXPERIMENT = EXPERIMENTS / "pbt_ppo_cartpole.py"
SCALING_EXPERIMENT = EXPERIMENTS / "ppo_cartpole.py"

# The experiment without its scheduler, through the suite's Python entry point (the same
# checks and launcher as `rlsuite.run`, which runs the PBT side).
RUN_WITHOUT_SCHEDULER = """
import dataclasses, sys
import rlsuite
from rlsuite import metrics
from rlsuite.launcher.loader import load_experiment
experiment = load_experiment(sys.argv[1])
experiment = dataclasses.replace(
    experiment, scheduler=None, stop={metrics.TRAINING_ITERATION: int(sys.argv[2])}
)
run = rlsuite.launch(experiment, name="no_pbt", storage_path=sys.argv[3])
sys.exit(1 if run.failed else 0)
"""


@dataclass(frozen=True)
class PbtBench:
    iterations: int
    pbt_s: float
    no_pbt_s: float
    env_steps_per_s: dict[int, float]
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]

    @property
    def ratio(self) -> float:
        return self.pbt_s / self.no_pbt_s

    def report(self) -> str:
        # One run of each: no spread to show, so the load is what tells how far to trust it.
        lines = [
            f"population of pbt_ppo_cartpole.py, {self.iterations} iterations per trial, "
            f"{rounds_title(1)}:",
            f"  without a scheduler  {self.no_pbt_s:7.1f} s",
            f"  with PBT             {self.pbt_s:7.1f} s",
            f"  ratio PBT / none     {self.ratio:7.3f}  (goal <= 1.10)",
            "PPO CartPole sampling, env steps/s by env runners:",
        ]
        base = self.env_steps_per_s[min(self.env_steps_per_s)]
        for runners, rate in sorted(self.env_steps_per_s.items()):
            lines.append(f"  {runners:>2} env runners  {rate:9.0f}  ({rate / base:.2f}x)")
        lines.append(f"  {load_line(self.machine_before, self.machine_after)}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


def measure(iterations: int, runner_counts: list[int]) -> PbtBench:
    before = machine()
    with tempfile.TemporaryDirectory() as out:
        args = [str(PBT_EXPERIMENT), str(iterations), out]
        no_pbt = run_child([sys.executable, "-c", RUN_WITHOUT_SCHEDULER, *args]).wall_s
    with tempfile.TemporaryDirectory() as out:
        stop = ("--stop", f"training_iteration={iterations}")
        pbt = run_child(_cli(PBT_EXPERIMENT, out, *stop)).wall_s
    rates = {n: sampling_rate(n, iterations) for n in runner_counts}
    return PbtBench(iterations, pbt, no_pbt, rates, before, machine())


def sampling_rate(env_runners: int, iterations: int) -> float:
    """Env steps per second of training time (sampling and learning) with `env_runners`."""
    with tempfile.TemporaryDirectory() as out:
        stop = ("--stop", f"training_iteration={iterations}")
        runners = ("--num-env-runners", str(env_runners))
        run_child(_cli(SCALING_EXPERIMENT, out, *stop, *runners))
        (result_file,) = Path(out).glob(f"{SCALING_EXPERIMENT.stem}/*/result.json")
        return steps_per_second(result_file)


def steps_per_second(result_file: Path) -> float:
    """Env steps over training seconds of a trial's last result."""
    last = read_results(result_file)[-1]
    steps = lookup(last, metrics.ENV_STEPS_SAMPLED_LIFETIME)
    return float(steps) / float(last[metrics.TIME_TOTAL_S])


def _cli(experiment: Path, out: str, *flags: str) -> list[str]:
    return [sys.executable, "-m", "rlsuite.run", str(experiment), "--storage-path", out, *flags]
