"""PBT overhead (pbt_ppo_cartpole.py's population with PBT and without a scheduler) and
PPO CartPole's sampling rate by number of env runners.

python scripts/bench_pbt.py [--iterations N] [--runners 1 2 ...] [--json]
"""

from __future__ import annotations

import sys

from benchmarks.common import bench_parser, emit
from rlsuite.flags import positive_int


def main() -> int:
    parser = bench_parser("bench_pbt.py", __doc__)
    parser.add_argument("--iterations", type=positive_int, default=15)
    parser.add_argument("--runners", type=positive_int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    # Imported after parsing: bad input fails at once, not after RLlib and torch load.
    from benchmarks.pbt import measure

    emit(measure(args.iterations, args.runners), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
