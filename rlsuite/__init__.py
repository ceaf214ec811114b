"""rlsuite: reinforcement-learning and multi-agent training on Ray RLlib, Tune and Train."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlsuite.errors import UsageError
    from rlsuite.experiment import ASHA, PB2, PBT, Experiment
    from rlsuite.launcher.api import RunResult, launch
    from rlsuite.search import BOHB, BayesOpt, HyperOpt, Optuna

# Public name -> the module that defines it.
_HOMES = {
    "ASHA": "rlsuite.experiment",
    "PB2": "rlsuite.experiment",
    "PBT": "rlsuite.experiment",
    "Experiment": "rlsuite.experiment",
    "BOHB": "rlsuite.search",
    "BayesOpt": "rlsuite.search",
    "HyperOpt": "rlsuite.search",
    "Optuna": "rlsuite.search",
    "UsageError": "rlsuite.errors",
    "RunResult": "rlsuite.launcher.api",
    "launch": "rlsuite.launcher.api",
}
__all__ = [
    "ASHA",
    "BOHB",
    "PB2",
    "PBT",
    "BayesOpt",
    "Experiment",
    "HyperOpt",
    "Optuna",
    "RunResult",
    "UsageError",
    "launch",
]


def __getattr__(name: str) -> Any:
    # Lazy (PEP 562): importing any rlsuite module imports this package first, and
    # rlsuite.experiment pulls in RLlib and torch (~3 s). Ray runs a setup hook from
    # rlsuite in every worker process of a run, Train's controller and helpers included.
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'rlsuite' has no attribute {name!r}")
