"""The cases of `scripts/bench.py` (single-agent throughput against plain RLlib).

Apart from `throughput.py` because it imports nothing heavy: the script checks `--case`
against these names before RLlib loads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    experiment: str | None
    """File in experiments/ that is the suite's side; None: the baseline's own config run
    by rlsuite (`baselines.with_rlsuite_machinery`), to compare at equal learning."""
    env_steps: int
    """Default budget of env steps for both sides."""
    target_return: float | None = None
    """Time-to-return cases stop (both sides) at the first mean return this high."""
    suite_flags: tuple[str, ...] = ()
    """`rlsuite.run` flags that make the suite's side comparable, each with its reason."""


CASES: dict[str, Case] = {
    "ppo_atari": Case("ppo_atari.py", 20_000),
    "ppo_atari_same_settings": Case(None, 20_000),
    "dqn_atari": Case(
        "dqn_atari.py",
        10_000,
        # Rainbow starts learning after 20k steps; start where RLlib's default does, so both
        # sides learn within the budget.
        suite_flags=("--set", "training.num_steps_sampled_before_learning_starts=1000"),
    ),
    "ppo_cartpole": Case("ppo_cartpole.py", 500_000, target_return=450),
    "sac_pendulum": Case("sac_pendulum.py", 20_000, target_return=-250),
}
