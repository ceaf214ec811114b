"""Single-agent throughput against plain RLlib, both sides in one run: PPO and DQN on
Pong, PPO CartPole to a return of 450, SAC on Pendulum (the cases: benchmarks/cases.py).

python scripts/bench.py [--case NAME ...] [--env-steps N] [--rounds R] [--smoke] [--json]
"""

from __future__ import annotations

import sys

from benchmarks.cases import CASES
from benchmarks.common import bench_parser, emit, machine
from rlsuite.flags import positive_int


def main() -> int:
    parser = bench_parser("bench.py", __doc__)
    parser.add_argument(
        "--case",
        action="append",
        choices=sorted(CASES),
        help="case to run (repeatable; default: all, one after another)",
    )
    parser.add_argument(
        "--env-steps", type=positive_int, help="env steps for both sides (default: the case's)"
    )
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=1,
        help="alternate baseline and suite R times (medians)",
    )
    parser.add_argument("--smoke", action="store_true", help="both sides shrunk as by `--smoke`")
    args = parser.parse_args()
    # Imported after parsing: bad input fails at once, not after RLlib and torch load.
    from benchmarks.throughput import ThroughputRun, measure

    before = machine()
    cases = []
    for case in args.case or sorted(CASES):
        cases.append(measure(case, args.env_steps, args.rounds, smoke=args.smoke))
        if not args.json:  # each case as soon as it ends: a run of all of them takes long
            print(cases[-1].report(), flush=True)
    run = ThroughputRun(cases, before, machine())
    if args.json:
        emit(run, as_json=True)
    else:
        print(run.machine_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
