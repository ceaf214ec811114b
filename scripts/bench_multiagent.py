"""Multi-agent throughput on MPE simple_spread (raw env, RLlib's default path, rlsuite):
`python scripts/bench_multiagent.py [--env-steps N] [--json]`."""

import argparse

from rlsuite.bench_multiagent import measure

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument(
    "--env-steps", type=int, default=12_000, help="training budget of both RLlib runs"
)
parser.add_argument("--json", action="store_true", help="print the figures as JSON")
args = parser.parse_args()
result = measure(args.env_steps)
print(result.to_json() if args.json else result.report())
