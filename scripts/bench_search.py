"""Random search vs Optuna TPE vs BOHB vs HyperOpt on PPO CartPole for one fixed budget of
trials: best return found, trials until one reached the threshold, wall time.

Full size (the defaults): 192 trials, not measured yet. Measured (docs/search.md):
--trials 8 --iterations 15 --repetitions 3 --random-starts 3, 26 minutes on 2 vCPUs.
The tiniest check: python scripts/bench_search.py --trials 2 --iterations 1 --repetitions 1

python scripts/bench_search.py [--trials N] [--iterations N] [--repetitions N]
    [--threshold RETURN] [--methods random optuna bohb hyperopt] [--json]
"""

from __future__ import annotations

import sys

from benchmarks.common import bench_parser, emit
from rlsuite.flags import positive_int

METHODS = ("random", "optuna", "bohb", "hyperopt")


def main() -> int:
    parser = bench_parser("bench_search.py", __doc__)
    parser.add_argument("--trials", type=positive_int, default=16, help="trials per sweep")
    parser.add_argument(
        "--iterations", type=positive_int, default=25, help="iterations (4,000 steps) per trial"
    )
    parser.add_argument("--repetitions", type=positive_int, default=3)
    parser.add_argument("--threshold", type=float, default=450.0, help="return to reach")
    parser.add_argument(
        "--random-starts",
        type=positive_int,
        default=6,
        help="random trials before Optuna's and HyperOpt's TPE model the results",
    )
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    args = parser.parse_args()
    # Imported after parsing: bad input fails at once, not after RLlib and torch load.
    from benchmarks.search import measure

    bench = measure(
        args.methods,
        args.trials,
        args.iterations,
        args.repetitions,
        args.threshold,
        args.random_starts,
    )
    emit(bench, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
