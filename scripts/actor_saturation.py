"""How saturated a MADDPG or MASAC team's actors are, on states of uniformly random play
of the env it trained on (rlsuite/multiagent/maddpg/diagnose.py says what each figure
means; docs/multiagent.md what it found on simple_tag and simple_spread).

python scripts/actor_saturation.py RUN [--trial NAME] [--checkpoint NAME] [--states N]
    [--seed S] [--json]

RUN is an experiment, trial or checkpoint directory; in an experiment directory the best
trial's latest checkpoint, as `rlsuite.evaluate` picks it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.common import bench_parser
from rlsuite.flags import positive_int


def main() -> int:
    parser = bench_parser("actor_saturation.py", __doc__)
    parser.add_argument("run", type=Path, help="a MADDPG or MASAC run's results folder")
    parser.add_argument("--trial", help="trial name (default: the best trial)")
    parser.add_argument("--checkpoint", help="checkpoint name (default: the latest)")
    parser.add_argument("--states", type=positive_int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from rlsuite.flags import quiet_restore_logs

    quiet_restore_logs()
    from rlsuite.errors import UsageError
    from rlsuite.evaluation.joint import JointPolicy
    from rlsuite.evaluation.locate import locate
    from rlsuite.evaluation.options import EvaluateOptions
    from rlsuite.evaluation.rl import prepare
    from rlsuite.multiagent.maddpg.diagnose import actor_saturation, random_play_observations

    try:
        target = locate(args.run, args.trial, args.checkpoint)
        evaluation = prepare(EvaluateOptions(path=args.run, episodes=0), target)
        if not isinstance(evaluation.policy, JointPolicy):
            raise UsageError(f"{args.run}: not a MADDPG or MASAC run (no team of actors)")
    except UsageError as error:
        parser.error(str(error))
    observations = random_play_observations(evaluation.env, args.states, args.seed)
    stats = actor_saturation(evaluation.policy.module, observations)
    if args.json:
        import json

        print(json.dumps({"checkpoint": str(target.checkpoint), "policies": stats}))
        return 0
    print(f"{target.checkpoint}: {args.states} states of random play")
    for policy, values in stats.items():
        print(f"  {policy}: " + "  ".join(f"{k} {v:.3g}" for k, v in values.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
