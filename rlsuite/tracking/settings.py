"""`Tracking`: where a run's trials are recorded besides Tune's own files (TensorBoard
events, result.json, progress.csv), as the `--mlflow`, `--mlflow-experiment` and
`--wandb` flags give it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tracking:
    mlflow: str | None = None
    """MLflow tracking URI: a server (`http://HOST:PORT`) or a database store (`sqlite:`).
    One MLflow run per trial; None logs nothing to MLflow."""
    mlflow_experiment: str | None = None
    """MLflow experiment the runs go to (None: the run's name)."""
    wandb: str | None = None
    """Weights & Biases project; one W&B run per trial, grouped by the run's name.
    `WANDB_MODE=offline` writes the runs under each trial's folder, with no network."""
