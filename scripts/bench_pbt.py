"""PBT overhead and env-runner scaling:
`python scripts/bench_pbt.py [--iterations N] [--runners 1 2] [--json]`."""

import argparse

from rlsuite.bench_pbt import measure

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--iterations", type=int, default=15)
parser.add_argument("--runners", type=int, nargs="+", default=[1, 2])
parser.add_argument("--json", action="store_true", help="print the figures as JSON")
args = parser.parse_args()
result = measure(args.iterations, args.runners)
print(result.to_json() if args.json else result.report())
