"""Launcher overhead: PPO CartPole through `rlsuite.run` against a hand-written RLlib
script, in alternating rounds, and where each side's seconds go (a row per phase).

python scripts/bench_overhead.py [--iterations N] [--rounds R] [--checkpoint-every K] [--json]
"""

from __future__ import annotations

import sys

from benchmarks.common import bench_parser, emit
from rlsuite.flags import positive_int


def main() -> int:
    parser = bench_parser("bench_overhead.py", __doc__)
    parser.add_argument("--iterations", type=positive_int, default=20)
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--checkpoint-every", type=positive_int, default=5)
    args = parser.parse_args()
    # Imported after parsing: bad input fails at once, not after RLlib and torch load.
    from benchmarks.overhead import measure

    emit(measure(args.iterations, args.rounds, args.checkpoint_every), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
