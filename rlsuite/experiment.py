"""The experiment contract: what one file in `experiments/` declares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Literal

from ray.tune.schedulers import ASHAScheduler, TrialScheduler

from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.pbt import ResumablePBT, resumable_pb2
from rlsuite.search import Searcher


def _at_least(owner: str, values: Mapping[str, int | float | None], low: float) -> None:
    """Refuse, as the experiment file's problem (before Ray starts), a field below `low`:
    Tune would refuse some only once Ray runs, and others not at all (a PBT cadence of 0
    divides by zero). None means "not set" and passes."""
    for name, value in values.items():
        if value is not None and not value >= low:
            raise UsageError(f"{owner}({name}={value!r}): must be at least {low:g}")


def _whole(owner: str, values: Mapping[str, Any]) -> None:
    """Counts are whole numbers: Tune would run 2.5 samples as 2, or checkpoint never."""
    for name, value in values.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, Integral)):
            raise UsageError(f"{owner}({name}={value!r}): must be a whole number")


def _full_time_attr(scheduler: Any, owner: str) -> None:
    """A scheduler's `time_attr` as the result key Tune looks up (`env_steps` too)."""
    full = _full_key(f"time_attr={scheduler.time_attr!r}", scheduler.time_attr, owner)
    object.__setattr__(scheduler, "time_attr", full)


def _low_high(bounds: Any) -> bool:
    """(low, high) as a tuple, list or array, low below high."""
    try:
        low, high = bounds
        return not isinstance(bounds, str) and bool(low < high)
    except (TypeError, ValueError):
        return False


def _check_population(owner: str, scheduler: Any, space: Mapping[str, Any], name: str) -> None:
    """What Tune's PBT and PB2 would refuse only once Ray runs."""
    _full_time_attr(scheduler, owner)
    if not isinstance(space, Mapping) or not space:
        raise UsageError(f"{owner}({name}={space!r}): name at least one config key to explore")
    if not 0 <= scheduler.quantile_fraction <= 0.5:
        raise UsageError(
            f"{owner}(quantile_fraction={scheduler.quantile_fraction!r}): must be in "
            "[0, 0.5] (the bottom fraction copies the top one of the same size)"
        )


@dataclass(frozen=True)
class ASHA:
    """Asynchronous successive halving: stops weak trials early."""

    max_t: int = 100
    """Most iterations (in `time_attr` units) a trial may run."""
    grace_period: int = 10
    """Iterations every trial runs before it can be stopped."""
    reduction_factor: float = 3
    """Fraction of trials (1/reduction_factor) kept at each rung."""
    time_attr: str = metrics.TRAINING_ITERATION

    def __post_init__(self) -> None:
        _at_least("ASHA", {"max_t": self.max_t, "grace_period": self.grace_period}, 1)
        _full_time_attr(self, "ASHA")
        if not self.reduction_factor > 1:
            raise UsageError(
                f"ASHA(reduction_factor={self.reduction_factor!r}): must be more than 1"
            )

    def build(self, metric: str, mode: str) -> TrialScheduler:
        return ASHAScheduler(
            time_attr=self.time_attr,
            metric=metric,
            mode=mode,
            max_t=self.max_t,
            grace_period=self.grace_period,
            reduction_factor=self.reduction_factor,
        )


@dataclass(frozen=True)
class PBT:
    """Population Based Training: exploit the best trials' checkpoints, explore their config."""

    hyperparam_mutations: Mapping[str, Any]
    """Flat RLlib config keys (`lr`, `entropy_coeff`) to lists or Tune domains to resample from."""
    perturbation_interval: int = 10
    """Iterations between exploit/explore steps; checkpoints follow the same cadence."""
    quantile_fraction: float = 0.25
    """Bottom fraction of trials that copy the top fraction."""
    resample_probability: float = 0.25
    """Chance that a mutated value is resampled rather than scaled by 0.8 or 1.2."""
    synch: bool = False
    """Synchronous PBT: every trial waits at each perturbation until all reach it, so
    exploits do not depend on which trial happens to run faster (slower overall)."""
    time_attr: str = metrics.TRAINING_ITERATION

    def __post_init__(self) -> None:
        _at_least("PBT", {"perturbation_interval": self.perturbation_interval}, 1)
        _check_population("PBT", self, self.hyperparam_mutations, "hyperparam_mutations")
        if not 0 <= self.resample_probability <= 1:
            raise UsageError(
                f"PBT(resample_probability={self.resample_probability!r}): must be in [0, 1]"
            )

    def build(self, metric: str, mode: str) -> TrialScheduler:
        return ResumablePBT(
            synch=self.synch,
            time_attr=self.time_attr,
            metric=metric,
            mode=mode,
            perturbation_interval=self.perturbation_interval,
            hyperparam_mutations=dict(self.hyperparam_mutations),
            quantile_fraction=self.quantile_fraction,
            resample_probability=self.resample_probability,
        )


@dataclass(frozen=True)
class PB2:
    """Population Based Bandits (Parker-Holder et al. 2020): PBT whose explore step picks
    new values with a Gaussian-process bandit inside bounds, for small populations."""

    hyperparam_bounds: Mapping[str, tuple[float, float]]
    """Flat RLlib config keys to (low, high) bounds of continuous values."""
    perturbation_interval: int = 10
    quantile_fraction: float = 0.25
    synch: bool = False
    """Synchronous: every trial waits at each perturbation until all reach it."""
    time_attr: str = metrics.TRAINING_ITERATION

    def __post_init__(self) -> None:
        _at_least("PB2", {"perturbation_interval": self.perturbation_interval}, 1)
        _check_population("PB2", self, self.hyperparam_bounds, "hyperparam_bounds")
        for key, bounds in self.hyperparam_bounds.items():
            if not _low_high(bounds):
                raise UsageError(
                    f"PB2(hyperparam_bounds={{{key!r}: {bounds!r}}}): give (low, high) "
                    "with low below high"
                )

    def build(self, metric: str, mode: str) -> TrialScheduler:
        return resumable_pb2(
            synch=self.synch,
            time_attr=self.time_attr,
            metric=metric,
            mode=mode,
            perturbation_interval=self.perturbation_interval,
            hyperparam_bounds={k: list(v) for k, v in self.hyperparam_bounds.items()},
            quantile_fraction=self.quantile_fraction,
        )


Scheduler = ASHA | PBT | PB2


@dataclass(frozen=True)
class Experiment:
    """One experiment: an RLlib config or a supervised config, plus how Tune runs it.

    The RLlib `AlgorithmConfig` passes straight through: everything that differs from
    RLlib's defaults is set on it in the experiment file. A `SupervisedConfig` runs the
    shared Ray Train loop (`rlsuite.supervised.loop`) instead. The launcher picks the
    workload for the config's kind once (`rlsuite.launcher.workloads`); this ground module
    names neither kind, so it imports no workload package.
    """

    config: Any
    """An RLlib `AlgorithmConfig` (the algorithm, env, model and training settings) or an
    `rlsuite.supervised.SupervisedConfig` (model, data set, optimisation and Ray Train
    scaling settings)."""
    stop: Mapping[str, float]
    """Stop criteria keyed by `rlsuite.metrics` constants or the command line's short
    names (`env_steps`, `episode_return_mean`); a trial stops at the first one met."""
    search: Mapping[str, Any] = field(default_factory=dict)
    """Tune param space over flat RLlib config keys or SupervisedConfig fields
    (`{"lr": tune.loguniform(1e-5, 1e-3)}`)."""
    scheduler: Scheduler | None = None
    """ASHA or PBT; None runs every trial to its stop criteria."""
    searcher: Searcher | None = None
    """How trials' configs are drawn from `search`: None samples each at random (Tune's
    default); `rlsuite.Optuna`, `HyperOpt`, `BOHB` (which brings its own Hyperband
    scheduler) or `BayesOpt` suggest each from the finished trials (`rlsuite.search`).
    Not with PBT or PB2, whose exploits change a trial's config under the searcher."""
    num_samples: int = 1
    """Trials sampled from `search` (the population size under PBT, the trial budget of a
    searcher)."""
    metric: str = metrics.EPISODE_RETURN_MEAN
    """What schedulers and the summary rank trials by (a key or a short name, as `stop`)."""
    mode: Literal["max", "min"] = "max"
    checkpoint_every: int = 10
    """Training iterations between checkpoints; one more is written at the end."""
    keep_checkpoints: int | None = 5
    """Most recent checkpoints kept per trial; None keeps all."""
    max_failures: int = 0
    """Times Tune restarts a failed trial from its last checkpoint. At 0 (fail loudly) a
    crashed env runner also fails the trial with the env's own error; above 0 RLlib
    restarts crashed env runners too (for clusters with preemptible nodes)."""

    def __post_init__(self) -> None:
        counts = {
            "num_samples": self.num_samples,
            "checkpoint_every": self.checkpoint_every,
            "keep_checkpoints": self.keep_checkpoints,
        }
        _whole("Experiment", {**counts, "max_failures": self.max_failures})
        _at_least("Experiment", counts, 1)
        _at_least("Experiment", {"max_failures": self.max_failures}, -1)  # -1: Tune's "always"
        if self.mode not in ("max", "min"):
            raise UsageError(f"Experiment(mode={self.mode!r}): 'max' or 'min'")
        _check_kinds(self)
        # Short names (`env_steps`, as `--stop` takes them) become the result keys Tune
        # looks up: Tune only warns about a key no result has, so the run would never stop
        # or rank on it. Names the suite does not know stay for the checks to judge.
        stop = {_full_key(f"stop={{{key!r}: ...}}", key): v for key, v in self.stop.items()}
        object.__setattr__(self, "stop", stop)
        object.__setattr__(self, "metric", _full_key(f"metric={self.metric!r}", self.metric))


def _full_key(written: str, name: str, owner: str = "Experiment") -> str:
    if name in metrics.OLD_API_STACK_NAMES:
        raise UsageError(
            f"{owner}({written}): RLlib's old API stack name, which the new "
            f"stack does not report; use {metrics.OLD_API_STACK_NAMES[name]!r} "
            "(rlsuite.metrics has the keys)"
        )
    return metrics.resolve(name) or name


def _check_kinds(experiment: Experiment) -> None:
    """Fields of the wrong kind fail here, as the file's problem, rather than as an
    AttributeError once Ray runs (Tune's own scheduler objects look like the right thing)."""
    if not isinstance(experiment.stop, Mapping):
        raise UsageError(
            f"Experiment(stop={type(experiment.stop).__name__}): a dict of result key to "
            "value, e.g. {metrics.ENV_STEPS_SAMPLED_LIFETIME: 100_000}"
        )
    for key in experiment.stop:
        if not isinstance(key, str):
            raise UsageError(
                f"Experiment(stop={{{key!r}: ...}}): stop keys are result key names, e.g. "
                "metrics.ENV_STEPS_SAMPLED_LIFETIME"
            )
    if not isinstance(experiment.metric, str):
        raise UsageError(
            f"Experiment(metric={experiment.metric!r}): a result key, e.g. "
            "metrics.EPISODE_RETURN_MEAN"
        )
    scheduler, searcher = experiment.scheduler, experiment.searcher
    if scheduler is not None and not isinstance(scheduler, ASHA | PBT | PB2):
        raise UsageError(
            f"Experiment(scheduler={type(scheduler).__name__}(...)): use rlsuite.ASHA, "
            "rlsuite.PBT or rlsuite.PB2, which take the same arguments less metric and mode "
            "(the suite builds Tune's scheduler with the experiment's)"
        )
    if searcher is not None and not isinstance(searcher, Searcher):
        raise UsageError(
            f"Experiment(searcher={type(searcher).__name__}(...)): use rlsuite.Optuna, "
            "HyperOpt, BOHB or BayesOpt (the suite builds Tune's searcher with the "
            "experiment's metric, mode and search space)"
        )
