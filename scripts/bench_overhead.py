"""Launcher overhead: `python scripts/bench_overhead.py [--iterations N] [--rounds R] [--json]`."""

import argparse

from rlsuite.bench_overhead import measure

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--iterations", type=int, default=20)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--json", action="store_true", help="print the figures as JSON")
args = parser.parse_args()
result = measure(args.iterations, args.rounds)
print(result.to_json() if args.json else result.report())
