"""Atari at scale: env steps per second of the suite's PPO (`ppo_atari.py`) and APPO
(`appo_atari.py`) on Pong at each number of env runners, optionally with a GPU learner;
the steady rate after the first iteration, its spread over rounds, learner samples/s and
the seconds per iteration spent sampling and learning. On a 16-core GPU machine:
`--env-runners 14 --num-gpus-per-learner 1`.

python scripts/bench_scale.py [--algo ppo|ppo-overlapped|appo ...] [--env-runners R ...] [--env-steps N]
    [--num-gpus-per-learner G] [--num-envs-per-env-runner E] [--set PATH=VALUE ...]
    [--rounds R] [--json]
"""

from __future__ import annotations

import shlex
import sys

from benchmarks.common import bench_parser, emit
from rlsuite.flags import non_negative_float, positive_int


def main() -> int:
    parser = bench_parser("bench_scale.py", __doc__)
    parser.add_argument(
        "--algo",
        action="append",
        choices=("ppo", "ppo-overlapped", "appo"),
        help="repeatable; default ppo and appo (ppo-overlapped: ppo_atari.py with "
        "training.overlap_sampling=True)",
    )
    parser.add_argument(
        "--env-runners", type=positive_int, action="append", help="repeatable; default 1 and 2"
    )
    parser.add_argument("--env-steps", type=positive_int, default=20_000, help="per run")
    parser.add_argument("--num-gpus-per-learner", type=non_negative_float, default=0.0)
    parser.add_argument("--num-envs-per-env-runner", type=positive_int)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="passed to rlsuite.run on every run (e.g. training.train_batch_size_per_learner=14336)",
    )
    parser.add_argument("--rounds", type=positive_int, default=1, help="alternating rounds")
    args = parser.parse_args()
    # Imported after parsing: bad input fails at once, not after RLlib and torch load.
    from benchmarks.scale import measure

    extra = [flag for assignment in args.set for flag in ("--set", assignment)]
    if args.num_envs_per_env_runner:
        extra += ["--num-envs-per-env-runner", str(args.num_envs_per_env_runner)]
    result = measure(
        args.algo or ["ppo", "appo"],
        args.env_runners or [1, 2],
        args.env_steps,
        gpus_per_learner=args.num_gpus_per_learner,
        rounds=args.rounds,
        extra=extra,
        command=shlex.join(["python", *sys.argv]),
    )
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
