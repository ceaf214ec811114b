"""One side of a throughput case (the plain-RLlib baseline or the suite): its figures, read
from the results Tune wrote."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rlsuite import metrics
from rlsuite.results import lookup


@dataclass(frozen=True)
class Side:
    """What one side did: counters and times of its last result, and the return target."""

    env_steps: float
    learner_samples: float
    train_s: float
    """Seconds inside training iterations (Tune's `time_total_s`): sampling and learning."""
    wall_s: float
    """Seconds of the whole process: start-up, Ray, building the algorithm, training."""
    final_return: float | None
    time_to_return_s: float | None
    """Training seconds at the first result whose mean return reached the target."""
    cpu_s: float | None = None
    """CPU seconds of every process of the run, start-up included: unlike wall time, what
    other users of a shared machine take does not inflate it."""

    @property
    def env_steps_per_s(self) -> float:
        return self.env_steps / self.train_s

    @property
    def learner_samples_per_s(self) -> float:
        return self.learner_samples / self.train_s

    @property
    def cpu_ms_per_env_step(self) -> float | None:
        return None if self.cpu_s is None else 1000 * self.cpu_s / self.env_steps

    def to_json(self) -> dict[str, Any]:
        rates = {
            "env_steps_per_s": self.env_steps_per_s,
            "learner_samples_per_s": self.learner_samples_per_s,
            "cpu_ms_per_env_step": self.cpu_ms_per_env_step,
        }
        return {**asdict(self), **rates}


def summarize(
    rows: list[dict[str, Any]], target: float | None, wall_s: float, cpu_s: float | None = None
) -> Side:
    """One side's figures from its results, in order (Tune's result.json lines)."""
    if not rows:
        raise RuntimeError("the run wrote no results")
    last = rows[-1]
    reached = None
    if target is not None:
        reached = next(
            (
                float(row[metrics.TIME_TOTAL_S])
                for row in rows
                if (lookup(row, metrics.EPISODE_RETURN_MEAN) or -float("inf")) >= target
            ),
            None,
        )
    final_return = lookup(last, metrics.EPISODE_RETURN_MEAN)
    return Side(
        env_steps=float(lookup(last, metrics.ENV_STEPS_SAMPLED_LIFETIME) or 0),
        learner_samples=float(lookup(last, metrics.MODULE_STEPS_TRAINED_LIFETIME) or 0),
        train_s=float(last[metrics.TIME_TOTAL_S]),
        wall_s=wall_s,
        final_return=None if final_return is None else float(final_return),
        time_to_return_s=reached,
        cpu_s=cpu_s,
    )
