"""rlsuite: reinforcement-learning and multi-agent training on Ray RLlib, Tune and Train."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlsuite.experiment import ASHA, PB2, PBT, Experiment

__all__ = ["ASHA", "PB2", "PBT", "Experiment"]


def __getattr__(name: str) -> Any:
    # Lazy (PEP 562): importing any rlsuite module imports this package first, and
    # rlsuite.experiment pulls in RLlib and torch (~3 s). Ray runs a setup hook from
    # rlsuite in every worker process of a run, Train's controller and helpers included.
    if name in __all__:
        from rlsuite import experiment

        return getattr(experiment, name)
    raise AttributeError(f"module 'rlsuite' has no attribute {name!r}")
