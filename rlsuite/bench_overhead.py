"""What the launcher costs: the same PPO CartPole run through `rlsuite.run` and as a
hand-written RLlib script, each a fresh process, for the same iterations and checkpoints.

Both sides run in one invocation, alternating, so machine noise hits both alike; the
figure to read is the ratio of medians.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "experiments" / "ppo_cartpole.py"

# The hand-written baseline: what a user writes with RLlib alone. It trains the same
# config for the same iterations and saves checkpoints at the same cadence.
HAND_WRITTEN = """
import sys
import ray
from rlsuite import envs
from rlsuite.launcher.loader import load_experiment

iterations, every, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
config = load_experiment(sys.argv[4]).config
ray.init(runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
envs.register(config.env)
algo = config.build_algo()
for i in range(1, iterations + 1):
    result = algo.train()
    if i % every == 0 or i == iterations:
        algo.save(f"{out}/checkpoint_{i:06d}")
algo.stop()
ray.shutdown()
"""


@dataclass(frozen=True)
class OverheadResult:
    iterations: int
    rounds: int
    rlsuite_s: list[float]
    rllib_s: list[float]

    @property
    def ratio(self) -> float:
        return statistics.median(self.rlsuite_s) / statistics.median(self.rllib_s)

    def report(self) -> str:
        return (
            f"PPO CartPole, {self.iterations} iterations, {self.rounds} rounds (median wall time):\n"
            f"  hand-written RLlib script  {statistics.median(self.rllib_s):7.1f} s\n"
            f"  python -m rlsuite.run      {statistics.median(self.rlsuite_s):7.1f} s\n"
            f"  ratio rlsuite / RLlib      {self.ratio:7.3f}  (goal <= 1.05)"
        )

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "ratio": self.ratio}, indent=2)


def measure(iterations: int, rounds: int, checkpoint_every: int = 5) -> OverheadResult:
    rlsuite_s, rllib_s = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as out:
            rllib_s.append(
                _timed(
                    [
                        sys.executable,
                        "-c",
                        HAND_WRITTEN,
                        str(iterations),
                        str(checkpoint_every),
                        out,
                        str(EXPERIMENT),
                    ]
                )
            )
        with tempfile.TemporaryDirectory() as out:
            rlsuite_s.append(
                _timed(
                    [
                        sys.executable,
                        "-m",
                        "rlsuite.run",
                        str(EXPERIMENT),
                        "--stop",
                        f"training_iteration={iterations}",
                        "--checkpoint-every",
                        str(checkpoint_every),
                        "--storage-path",
                        out,
                    ]
                )
            )
    return OverheadResult(iterations, rounds, rlsuite_s, rllib_s)


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start
