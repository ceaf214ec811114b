"""A multi-agent run's returns per policy (RLModule): MADDPG's and MASAC's teams, the
independent learners of IPPO or SAC, self-play's main policy and its frozen copies.

RLlib's env runners log each policy's mean episode return, summed over the agents it
controls, under `env_runners/module_episode_returns_mean/<policy>` (the suite's MADDPG logs
its teams there too). A run with one policy gets no section: that return is the team
return of the tables above.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from rlsuite import metrics
from rlsuite.reporting import figures, stats
from rlsuite.reporting.formatting import number
from rlsuite.reporting.runs import Config, FinalWindow
from rlsuite.results import lookup


def policy_ids(config: Config) -> list[str]:
    """Every policy that reported a return in some result of some trial."""
    ids: set[str] = set()
    for trial in config.trials:
        for result in trial.results:
            per_policy = lookup(result, metrics.POLICY_RETURN_MEAN_PREFIX)
            if isinstance(per_policy, Mapping):
                ids |= {str(i) for i, v in per_policy.items() if isinstance(v, int | float)}
    return sorted(ids)


def section(config: Config, output: Path, window: FinalWindow) -> list[str]:
    """Markdown (and `policies_<label>.png`) for a run with two policies or more."""
    ids = policy_ids(config)
    if len(ids) < 2:
        return []
    figure = figures.policy_curves(config, ids, output / f"policies_{config.label}.png")
    lines = [
        f"### {config.label}: per policy",
        "",
        "Each policy's mean episode return (its agents' rewards summed); final: its mean "
        f"over each trial's {window.describe()}; seeds: trials in which the policy played.",
        "",
        f"![returns per policy]({figure.name})",
        "",
        "| policy | seeds | IQM | 95% CI | mean | std |",
        "| --- | ---: | ---: | --- | ---: | ---: |",
    ]
    for policy in ids:
        key = metrics.policy_return_mean(policy)
        scores = np.array([trial.final_score(key, window) for trial in config.trials])
        scores = scores[np.isfinite(scores)]
        low, high = stats.stratified_bootstrap_ci(scores)
        lines.append(
            f"| {policy} | {len(scores)} | {number(stats.iqm(scores))} "
            f"| [{number(low)}, {number(high)}] | {number(scores.mean())} | {number(scores.std())} |"
        )
    return [*lines, ""]
