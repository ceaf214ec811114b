"""Single-agent throughput against plain RLlib, both in one run:
`python scripts/bench.py [--case ppo_atari|dqn_atari|ppo_cartpole|sac_pendulum ...]
[--env-steps N] [--rounds R] [--json]`. Logic in rlsuite/bench.py."""

import json
import sys

from rlsuite.bench import CASES, machine, measure
from rlsuite.cli import Parser, positive_int

parser = Parser(prog="python scripts/bench.py", description=__doc__)
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
    "--rounds", type=positive_int, default=1, help="alternate baseline and suite R times (medians)"
)
parser.add_argument("--smoke", action="store_true", help="both sides shrunk as by `--smoke`")
parser.add_argument("--json", action="store_true", help="print the figures as JSON")
args = parser.parse_args()

before = machine()
results = []
for case in args.case or sorted(CASES):
    result = measure(case, args.env_steps, args.rounds, smoke=args.smoke)
    results.append(result)
    if not args.json:
        print(result.report(), flush=True)
after = machine()
if args.json:
    cases = [r.to_dict() for r in results]
    print(json.dumps({"machine_before": before, "machine_after": after, "cases": cases}, indent=2))
else:
    print(
        f"load average before {before['load_average_1m']:.1f}, after {after['load_average_1m']:.1f} on {before['cpus']} CPUs"
    )
sys.exit(0)
