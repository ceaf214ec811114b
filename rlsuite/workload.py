"""The seam between the launcher and a kind of experiment.

The launcher knows two kinds of experiment config, an RLlib `AlgorithmConfig`
(`rlsuite.rl.workload`) and a `SupervisedConfig` (`rlsuite.supervised.workload`), only
through this protocol. `rlsuite.launcher.workloads.workload_for` picks the kind once per
run; nothing else branches on the config's type. A new kind (a Serve deployment, an
offline data set) implements the protocol and adds one line there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ray.tune import CheckpointConfig

    from rlsuite.experiment import Experiment
    from rlsuite.options import RunOptions


class Workload(Protocol):
    name: str
    """What the kind is called in messages ("RL", "supervised")."""
    worker_setup_hook: str
    scaling_flags: str
    """The flags that size one trial, named by the fix of a trial too large to run."""
    """Ray's `worker_process_setup_hook` for every worker of a local run (a dotted path)."""

    def apply_flags(self, experiment: Experiment, options: RunOptions) -> Experiment:
        """The experiment with `--set`, scaling and seed flags applied to its config."""
        ...

    def param_keys(self, path: str) -> tuple[str, ...]:
        """The top-level param-space keys that a `--set PATH=...` edit writes: a search over
        any of them replaces the edit in every trial."""
        ...

    def smoke_config(self, config: Any) -> Any:
        """The config shrunk to a tiny CPU run (`--smoke`); the input is left untouched."""
        ...

    def check(self, experiment: Experiment, address: str | None) -> None:
        """UsageError, one line, for anything that cannot run: before Ray starts."""
        ...

    def param_space(self, experiment: Experiment) -> dict[str, Any]:
        """Tune's param space: the config as a dict with the experiment's search on top."""
        ...

    def trainable(self, experiment: Experiment) -> Any:
        """What Tune runs per trial."""
        ...

    def trial_resources(self, experiment: Experiment) -> dict[str, float]:
        """Everything one trial reserves, summed over its actors (CPU, GPU, custom)."""
        ...

    def trial_bundles(self, experiment: Experiment) -> list[dict[str, float]]:
        """What one trial reserves per actor (its placement group's bundles): each must
        fit on one node."""
        ...

    def max_concurrent_trials(
        self, experiment: Experiment, cluster_resources: dict[str, float]
    ) -> int | None:
        """Trials to run at once when the user sets none (None: as many as fit)."""
        ...

    def check_cluster(self, experiment: Experiment, nodes: list[dict[str, float]]) -> None:
        """UsageError, one line, for what only the cluster's live nodes (their resources,
        known once Ray is up) show: after Ray joins a cluster (`--address`), or on a Ray
        the user started."""
        ...

    def checkpoint_config(self, experiment: Experiment) -> CheckpointConfig:
        """How Tune writes and keeps the trials' checkpoints."""
        ...
