"""Experiment tracking beyond Tune's own files: MLflow (`--mlflow`), Weights & Biases
(`--wandb`) and TensorBoard's HParams dashboard (always). docs/tracking.md says what goes
where. mlflow and wandb are imported only when their flag is given."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ray.tune import Callback

from rlsuite.experiment import Experiment
from rlsuite.tracking.checks import check_tracking
from rlsuite.tracking.settings import Tracking

if TYPE_CHECKING:  # the launcher imports this package
    from rlsuite.launcher.tuner import Launch


def tracking_callbacks(launch: Launch, experiment: Experiment) -> list[Callback]:
    """Tune callbacks of a run: the HParams logger (in place of Tune's own TensorBoard
    logger) and one per tracker `launch.tracking` asks for."""
    from rlsuite.tracking.hparams import HParamsLogger
    from rlsuite.tracking.selection import run_tags, tracked_names

    tracking, name = launch.tracking, launch.name
    names = tracked_names(experiment.metric, experiment.stop)
    callbacks: list[Callback] = [HParamsLogger(searched_keys(experiment), names)]
    tags = run_tags(launch.experiment_file) if tracking.mlflow or tracking.wandb else {}
    if tracking.mlflow:
        from rlsuite.tracking.mlflow_runs import MlflowTracking

        experiment_name = tracking.mlflow_experiment or name
        callbacks.append(MlflowTracking(tracking.mlflow, experiment_name, tags, names))
    if tracking.wandb:
        from rlsuite.tracking.wandb_runs import WandbTracking

        callbacks.append(WandbTracking(tracking.wandb, name, names, tags, launch.experiment_dir))
    return callbacks


def searched_keys(experiment: Experiment) -> list[str]:
    """Config keys a sweep varies: its search space and what PBT or PB2 perturbs."""
    scheduler = experiment.scheduler
    perturbed = getattr(scheduler, "hyperparam_mutations", None) or getattr(
        scheduler, "hyperparam_bounds", {}
    )
    return list(dict.fromkeys([*experiment.search, *perturbed]))  # top-level keys


__all__ = ["Tracking", "check_tracking", "searched_keys", "tracking_callbacks"]
