"""QMIX's mixer over a run's checkpoints: does the team value grow in the agents' Q values
or in the mixer (its gain dQ_tot/dQ_a, its state-only part)? See
rlsuite/multiagent/qmix/diagnose.py; what it found is in docs/multiagent.md.

python scripts/qmix_mixer_gain.py RUN [--trial NAME] [--episodes N] [--json]

For each checkpoint of the run's best trial (or --trial), N greedy episodes of the env it
trained on: their mean return, then the mixer's breakdown over every step's observation.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.common import bench_parser
from rlsuite.flags import positive_int


def main() -> int:
    parser = bench_parser("qmix_mixer_gain.py", __doc__)
    parser.add_argument("run", type=Path, help="a QMIX run's results folder")
    parser.add_argument("--trial", help="trial name (default: the best trial)")
    parser.add_argument("--episodes", type=positive_int, default=8)
    args = parser.parse_args()
    from rlsuite.flags import quiet_restore_logs

    quiet_restore_logs()
    from rlsuite.errors import UsageError
    from rlsuite.evaluation.locate import checkpoint_dirs, locate
    from rlsuite.evaluation.policy import load_module
    from rlsuite.multiagent.qmix.team_env import TEAM_PREFIX, team_env

    try:
        target = locate(args.run, trial=args.trial)
        module = load_module(target.checkpoint)
        if not hasattr(getattr(module, "mixer", None), "hyper_w1") or not str(
            target.env
        ).startswith(TEAM_PREFIX):
            raise UsageError(f"{args.run}: not a QMIX run (no QMIX mixer in its module)")
    except UsageError as error:
        parser.error(str(error))
    env = team_env(str(target.env).removeprefix(TEAM_PREFIX), target.env_config)
    rows = []
    for checkpoint in checkpoint_dirs(target.checkpoint.parent):
        module = load_module(checkpoint)
        returns, observations = _greedy_episodes(module, env, args.episodes)
        breakdown = _breakdown(module, observations)
        rows.append({"checkpoint": checkpoint.name, "greedy_return": returns, **breakdown})
    if args.json:
        import json

        print(json.dumps(rows, indent=1))
    else:
        for row in rows:
            print(
                "  ".join(
                    f"{k} {v:.2f}" if isinstance(v, float) else str(v) for k, v in row.items()
                )
            )
    return 0


def _greedy_episodes(module: Any, env: Any, episodes: int) -> tuple[float, list[dict]]:
    from ray.rllib.core.columns import Columns

    returns, seen = [], []
    for episode in range(episodes):
        obs, _ = env.reset(seed=episode)
        total, done = 0.0, False
        while not done:
            seen.append(obs)
            batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in obs.items()}}
            with torch.no_grad():
                action = module.forward_inference(batch)[Columns.ACTIONS][0].numpy()
            obs, reward, terminated, truncated, _ = env.step(action)
            total, done = total + float(reward), terminated or truncated
        returns.append(total)
    return float(np.mean(returns)), seen


def _breakdown(module: Any, observations: list[dict]) -> dict[str, float]:
    from rlsuite.multiagent.qmix.diagnose import mixer_breakdown

    obs = {k: torch.as_tensor(np.stack([o[k] for o in observations])) for k in observations[0]}
    return mixer_breakdown(module, obs)


if __name__ == "__main__":
    sys.exit(main())
