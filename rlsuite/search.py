"""Tune's search algorithms as plain values: Optuna (TPE), HyperOpt, BOHB and BayesOpt.

Without a searcher Tune samples every trial of `Experiment.search` at random, each on its
own. A searcher models the results of the finished trials and suggests the next config
from them. Each class here is a frozen dataclass of plain values, like `ASHA` and `PBT`,
built into Tune's searcher at launch and wrapped in Tune's `ConcurrencyLimiter`: a searcher
learns only from finished trials, so the fewer run at once, the more each suggestion knows.
`num_samples` is the trial budget; metric and mode come from the experiment.

Tune saves a searcher's state in the experiment directory beside its own, and `--resume`
(`Tuner.restore`) loads both: a resumed sweep suggests no trial twice and counts the
finished trials toward `num_samples`.

The searchers' packages (see pyproject.toml for the versions measured to work) are checked
before Ray starts: a missing one is named with its `pip install` line.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from ray.tune.schedulers import HyperBandForBOHB
from ray.tune.search import ConcurrencyLimiter
from ray.tune.search import Searcher as TuneSearcher
from ray.tune.search.sample import Categorical, Domain, Float, Function, Integer, Quantized
from ray.tune.search.variant_generator import parse_spec_vars

from rlsuite import metrics
from rlsuite.errors import UsageError

BUDGET_KEYS = (metrics.TRAINING_ITERATION, metrics.EPOCH)
"""Stop keys that give Hyperband (BOHB) its budget: iterations (RL) or epochs (supervised,
one result per epoch, so a trial's `training_iteration` is its epoch)."""
Points = list[dict[str, Any]] | None
"""Points to evaluate first, as Tune's searchers take them."""


@dataclass(frozen=True)
class _Searcher:
    """What every searcher takes."""

    max_concurrent: int = 2
    """Most trials running at once (Tune's `ConcurrencyLimiter`); a smaller
    `--max-concurrent-trials`, or what the cluster fits, wins."""
    points_to_evaluate: Sequence[Mapping[str, Any]] = ()
    """Configs to try first (a known good one), each giving a value to every searched key."""
    seed: int | None = None
    """Seed of the searcher's own sampling (None: a fresh one each sweep)."""

    modules: ClassVar[tuple[str, ...]] = ()
    """Modules the searcher imports, checked before Ray starts."""
    install: ClassVar[str] = ""
    """The pip requirements that bring them."""

    def build(self, metric: str, mode: str) -> TuneSearcher:
        """Tune's searcher, limited to `max_concurrent` trials at once."""
        points = [dict(point) for point in self.points_to_evaluate] or None
        searcher = self._tune_searcher(metric, mode, points)
        return PlainValues(searcher, max_concurrent=self.max_concurrent)

    def _tune_searcher(self, metric: str, mode: str, points: Points) -> TuneSearcher:
        raise NotImplementedError

    def check(self, search: Mapping[str, Any], stop: Mapping[str, float]) -> None:
        """UsageError, one line, for a search or stop this searcher cannot take."""
        name = type(self).__name__
        missing = [m for m in self.modules if importlib.util.find_spec(m) is None]
        if missing:
            raise UsageError(
                f"rlsuite.{name} needs {', '.join(missing)}, which is not installed: "
                f"pip install {self.install}"
            )
        if self.max_concurrent < 1:
            raise UsageError(
                f"{name}: max_concurrent must be at least 1, got {self.max_concurrent}"
            )
        domains = searched_domains(name, search)
        self._check(domains, stop)
        _check_points(name, self.points_to_evaluate, domains)

    def _check(self, domains: Mapping[str, Domain], stop: Mapping[str, float]) -> None:
        """What this searcher alone refuses."""


@dataclass(frozen=True)
class Optuna(_Searcher):
    """Optuna's TPE sampler (Bergstra et al. 2011) through Tune's `OptunaSearch`: models good
    and bad trials' values apart and samples where good ones are denser. Any space."""

    random_starts: int = 10
    """Trials sampled at random before TPE models the results (Optuna's default)."""

    modules: ClassVar[tuple[str, ...]] = ("optuna",)
    install: ClassVar[str] = "'optuna==5.0.0'"

    def _tune_searcher(self, metric: str, mode: str, points: Points) -> TuneSearcher:
        import optuna
        from ray.tune.search.optuna import OptunaSearch

        sampler = optuna.samplers.TPESampler(n_startup_trials=self.random_starts, seed=self.seed)
        return OptunaSearch(metric=metric, mode=mode, points_to_evaluate=points, sampler=sampler)


@dataclass(frozen=True)
class HyperOpt(_Searcher):
    """HyperOpt's TPE through Tune's `HyperOptSearch`. Any space."""

    random_starts: int = 20
    """Trials sampled at random before TPE models the results (Tune's default)."""

    modules: ClassVar[tuple[str, ...]] = ("hyperopt",)
    install: ClassVar[str] = "'hyperopt==0.3.0'"

    def _tune_searcher(self, metric: str, mode: str, points: Points) -> TuneSearcher:
        from ray.tune.search.hyperopt import HyperOptSearch

        return HyperOptSearch(
            metric=metric,
            mode=mode,
            points_to_evaluate=points,
            n_initial_points=self.random_starts,
            random_state_seed=self.seed,
        )


@dataclass(frozen=True)
class BOHB(_Searcher):
    """BOHB (Falkner et al. 2018): Hyperband's early stopping with a kernel-density model
    choosing the configs, through Tune's `TuneBOHB`. The launcher pairs it with
    `HyperBandForBOHB` over the stop's iteration (RL) or epoch (supervised) budget, so the
    experiment sets no other scheduler; paused trials resume from their checkpoints."""

    reduction_factor: float = 3
    """Hyperband's eta: each rung keeps 1/reduction_factor of its trials."""

    modules: ClassVar[tuple[str, ...]] = ("hpbandster", "ConfigSpace")
    install: ClassVar[str] = "'hpbandster==0.7.4' 'ConfigSpace==1.2.*'"

    def _tune_searcher(self, metric: str, mode: str, points: Points) -> TuneSearcher:
        from ray.tune.search.bohb import TuneBOHB

        return TuneBOHB(metric=metric, mode=mode, points_to_evaluate=points, seed=self.seed)

    def scheduler(self, metric: str, mode: str, stop: Mapping[str, float]) -> HyperBandForBOHB:
        """Hyperband's brackets over the stop's budget (`max_t`)."""
        return HyperBandForBOHB(
            time_attr=metrics.TRAINING_ITERATION,
            metric=metric,
            mode=mode,
            max_t=budget(stop) or 1,
            reduction_factor=self.reduction_factor,
        )

    def _check(self, domains: Mapping[str, Domain], stop: Mapping[str, float]) -> None:
        if budget(stop) is None:
            raise UsageError(
                "BOHB needs a budget in iterations or epochs for Hyperband: add "
                "metrics.TRAINING_ITERATION (RL) or metrics.EPOCH (supervised) to the "
                "experiment's stop, or pass --stop training_iteration=N"
            )


@dataclass(frozen=True)
class BayesOpt(_Searcher):
    """Bayesian optimization with a Gaussian process (the `bayesian-optimization` package)
    through Tune's `BayesOptSearch`. Continuous spaces only (`tune.uniform`); a
    `tune.loguniform` is searched uniformly between its bounds (BayesOpt drops the log)."""

    random_starts: int = 10
    """Trials sampled at random before the Gaussian process guides the search."""

    modules: ClassVar[tuple[str, ...]] = ("bayes_opt",)
    install: ClassVar[str] = "'bayesian-optimization<2'"

    def _tune_searcher(self, metric: str, mode: str, points: Points) -> TuneSearcher:
        from ray.tune.search.bayesopt import BayesOptSearch

        return BayesOptSearch(
            metric=metric,
            mode=mode,
            points_to_evaluate=points,
            random_state=42 if self.seed is None else self.seed,
            random_search_steps=self.random_starts,
        )

    def _check(self, domains: Mapping[str, Domain], stop: Mapping[str, float]) -> None:
        for key, domain in domains.items():
            if not isinstance(domain, Float):
                raise UsageError(
                    f"BayesOpt searches continuous spaces only, but search '{key}' is a "
                    f"{type(domain).__name__}; make it tune.uniform(low, high) or use "
                    "rlsuite.Optuna or rlsuite.HyperOpt"
                )


Searcher = Optuna | HyperOpt | BOHB | BayesOpt


class PlainValues(ConcurrencyLimiter):
    """Tune's `ConcurrencyLimiter` whose suggestions hold Python numbers, not numpy's:
    BOHB (ConfigSpace) suggests `np.int64` batch sizes, which torch's DataLoader refuses
    ("batch_size should be a positive integer value, but got batch_size=64")."""

    def suggest(self, trial_id: str) -> dict[Any, Any] | None:
        config = super().suggest(trial_id)
        return _plain(config) if isinstance(config, dict) else config


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value.item() if isinstance(value, np.generic) else value


def budget(stop: Mapping[str, float]) -> int | None:
    """The stop's iteration or epoch count, the unit of Hyperband's rungs; None without."""
    for key in BUDGET_KEYS:
        if key in stop:
            return max(1, int(stop[key]))
    return None


def smoke_searcher(searcher: Searcher, search: Mapping[str, Any]) -> Searcher:
    """The same searcher running one trial at a time over smoke's `search` (`--smoke`),
    with the points to evaluate first that lie inside it."""
    _, domains, _ = parse_spec_vars(dict(search))
    by_key = {"/".join(map(str, path)): domain for path, domain in domains}
    points = [
        point
        for point in searcher.points_to_evaluate
        if all(key in point and _inside(domain, point[key]) for key, domain in by_key.items())
    ]
    return dataclasses.replace(searcher, max_concurrent=1, points_to_evaluate=tuple(points))


def searched_domains(name: str, search: Mapping[str, Any]) -> dict[str, Domain]:
    """The search's sampled domains by key ("a/b" for nested ones): refuses a grid, a
    `sample_from` function and a search with nothing to search."""
    _, domains, grids = parse_spec_vars(dict(search))
    if grids:
        key = "/".join(map(str, grids[0][0]))
        raise UsageError(
            f"{name} cannot take a grid search (search '{key}'; --seeds makes one): use "
            "tune.choice([...]) for it, or drop the searcher"
        )
    found = {"/".join(map(str, path)): domain for path, domain in domains}
    for key, domain in found.items():
        if isinstance(domain, Function):
            raise UsageError(
                f"{name} cannot sample search '{key}' from a function (tune.sample_from); "
                "use tune.uniform, tune.loguniform, tune.randint or tune.choice"
            )
    if not found:
        raise UsageError(
            f"{name} has nothing to search: give the experiment a search space "
            "(search={'lr': tune.loguniform(1e-5, 1e-3)}) or drop the searcher"
        )
    return found


def _check_points(
    name: str, points: Sequence[Mapping[str, Any]], domains: Mapping[str, Domain]
) -> None:
    for index, point in enumerate(points):
        where = f"{name} points_to_evaluate[{index}]"
        for key in point:
            if key not in domains:
                raise UsageError(
                    f"{where}: '{key}' is not searched; searched: {', '.join(domains)}"
                )
        for key, domain in domains.items():
            if key not in point:
                raise UsageError(f"{where} lacks '{key}'; give a value for every searched key")
            if not _inside(domain, point[key]):
                raise UsageError(f"{where}: {key}={point[key]!r} is outside its search domain")


def _inside(domain: Domain, value: Any) -> bool:
    if isinstance(domain, Categorical):
        return value in domain.categories
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return False
    if isinstance(domain, Integer):  # tune.randint's upper end is excluded, qrandint's not
        quantized = isinstance(domain.get_sampler(), Quantized)
        return domain.lower <= value < domain.upper + quantized
    if isinstance(domain, Float):
        return domain.lower <= value <= domain.upper
    return True


__all__ = ["BOHB", "BayesOpt", "HyperOpt", "Optuna", "Searcher", "budget", "smoke_searcher"]
