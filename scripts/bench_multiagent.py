"""Multi-agent throughput on MPE simple_spread: the raw PettingZoo env, the suite's
batched env, RLlib's default multi-agent path and rlsuite's ppo_shared_spread.py and
mappo_spread.py, env steps per second, medians of alternating rounds.

python scripts/bench_multiagent.py [--env-steps N] [--rounds N] [--json]
"""

from __future__ import annotations

import sys

from benchmarks.common import bench_parser, emit
from rlsuite.flags import positive_int


def main() -> int:
    parser = bench_parser("bench_multiagent.py", __doc__)
    parser.add_argument(
        "--env-steps", type=positive_int, default=12_000, help="training budget of both RLlib runs"
    )
    parser.add_argument(
        "--rounds", type=positive_int, default=3, help="rounds of every side (medians)"
    )
    args = parser.parse_args()
    # Imported after parsing: bad input fails at once, not after RLlib and torch load.
    from benchmarks.multiagent import measure

    emit(measure(args.env_steps, args.rounds), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
