"""What one iteration of policy lag costs in learning: env steps to a mean return of 450 on
CartPole for `ppo_cartpole.py`'s settings with one remote env runner, with the runners'
sampling overlapped with the learner's update (`rlsuite/rl/overlapped_ppo.py`) and
without, one seed after another. Not a speed benchmark: env steps, not seconds.

python scripts/overlap_learning.py [--seeds N] [--max-env-steps M] [--json]
"""

from __future__ import annotations

import statistics
import sys
from typing import Any

from benchmarks.common import EXPERIMENTS, bench_parser, emit
from rlsuite.flags import positive_int


def env_steps_to_450(base: Any, seed: int, overlap: bool, max_env_steps: int) -> float | None:
    from rlsuite.rl.overlapped_ppo import OverlappedPPOConfig

    config = OverlappedPPOConfig().update_from_dict(base.to_dict())
    config.env_runners(num_env_runners=1).training(overlap_sampling=overlap)
    algorithm = config.debugging(seed=seed).build_algo()
    try:
        while True:
            result = algorithm.train()
            steps = float(result["num_env_steps_sampled_lifetime"])
            if result["env_runners"].get("episode_return_mean", 0.0) >= 450:
                return steps
            if steps >= max_env_steps:
                return None
    finally:
        algorithm.stop()


def main() -> int:
    parser = bench_parser("overlap_learning.py", __doc__)
    parser.add_argument("--seeds", type=positive_int, default=7, help="seeds 0..N-1")
    parser.add_argument("--max-env-steps", type=positive_int, default=400_000)
    args = parser.parse_args()
    import ray

    from rlsuite.envs import registry
    from rlsuite.launcher.loader import load_experiment

    base = load_experiment(EXPERIMENTS / "ppo_cartpole.py").config
    registry.register(base.env)
    ray.init(address="local", include_dashboard=False)
    runs: dict[str, list[float | None]] = {"overlapped": [], "ppo": []}
    for seed in range(args.seeds):
        for name, overlap in (("overlapped", True), ("ppo", False)):
            steps = env_steps_to_450(base, seed, overlap, args.max_env_steps)
            runs[name].append(steps)
            print(f"seed {seed} {name}: {steps}", file=sys.stderr, flush=True)
    ray.shutdown()
    emit(Result(runs, args.max_env_steps), args.json)
    return 0


class Result:
    def __init__(self, runs: dict[str, list[float | None]], max_env_steps: int) -> None:
        self.runs, self.max_env_steps = runs, max_env_steps

    def report(self) -> str:
        lines = ["CartPole, env steps to a mean return of 450, ppo_cartpole.py, 1 env runner"]
        for name, steps in self.runs.items():
            reached = [s for s in steps if s is not None]
            median = f"{statistics.median(reached):,.0f}" if reached else "-"
            shown = ", ".join("not reached" if s is None else f"{s:,.0f}" for s in steps)
            lines.append(f"  {name:11} median {median} ({shown})")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "max_env_steps": self.max_env_steps}


if __name__ == "__main__":
    sys.exit(main())
