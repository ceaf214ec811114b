"""Every supervised experiment file runs with --smoke (its own file so that pytest-xdist
runs it beside the RL experiments' smoke runs). As in test_experiments.py, the runs join
one Ray started for this file (`--address`, conftest's `ray_cluster`), and the files in
tests/helpers.py's SMOKE_COVERED_BY are `slow`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import ray.train
import torch
from torch.utils.data import DataLoader

from rlsuite import metrics
from rlsuite.supervised import registry
from rlsuite.supervised.checkpoint import load_model
from rlsuite.supervised.loop import logits_of
from tests.helpers import (
    SUPERVISED_EXPERIMENTS,
    TENSORBOARD_PREFIX,
    RayCluster,
    smoke_matrix,
    smoke_trials,
    tensorboard_scalars,
)


@pytest.mark.parametrize("path", smoke_matrix(SUPERVISED_EXPERIMENTS), ids=lambda p: p.stem)
def test_smoke_run_trains_checkpoints_and_logs(
    path: Path, storage: Path, ray_cluster: RayCluster
) -> None:
    join = ("--address", ray_cluster.address)
    trials = smoke_trials(path, storage, *join, env=ray_cluster.env)
    for trial in trials:
        _assert_supervised_trial(trial, storage / path.stem / trial["trial"])


def _assert_supervised_trial(trial: dict, trial_dir: Path) -> None:
    """Two epochs ran and reported validation accuracy; the last checkpoint restores into
    the model with Ray Train's Checkpoint API and classifies a batch; TensorBoard holds
    every supervised metric."""
    progress = pd.read_csv(trial_dir / "progress.csv")
    assert list(progress[metrics.EPOCH]) == [1, 2]
    assert list(progress[metrics.TRAINING_ITERATION]) == [1, 2]
    assert progress[metrics.VALIDATION_ACCURACY].between(0, 1).all()
    assert (progress[metrics.SAMPLES_PER_SECOND] > 0).all()
    assert trial["epochs"] == 2 and trial["validation_accuracy"] is not None
    checkpoint = ray.train.Checkpoint.from_directory(trial["checkpoint"])
    model, config = load_model(checkpoint)
    splits = registry.load(config, checkpoint)  # a text model's own tokenizer
    loader = DataLoader(splits.validation, batch_size=8, collate_fn=splits.collate_fn)
    inputs, labels = next(iter(loader))
    with torch.no_grad():
        logits = logits_of(model, inputs)
    assert logits.shape == (labels.shape[0], config.num_classes)
    tags = tensorboard_scalars(trial_dir)
    for key in metrics.SUPERVISED_METRICS:
        assert TENSORBOARD_PREFIX + key in tags, sorted(tags)
