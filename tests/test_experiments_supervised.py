"""Every supervised experiment file runs with --smoke (its own file so that pytest-xdist
runs it beside the RL experiments' smoke runs). As in test_experiments.py, the runs join
one Ray started for this file (`--address`, conftest's `ray_cluster`), and the files in
tests/smoke_matrix.py's SMOKE_COVERED_BY are `slow`. resnet_cifar10's and bert_sst2's runs are
conftest's `cifar_sweep` and `sst2_sweep`, on files in CIFAR's and SST-2's formats, which
test_supervised_runs.py and test_supervised_text.py read too. The CIFAR sweep also goes to
MLflow (a SQLite store): a supervised sweep's tracking is checked on it rather than on a
run of its own (tests/test_tracking.py sends an RL run to an MLflow server)."""

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
    ROOT,
    SUPERVISED_EXPERIMENTS,
    TENSORBOARD_PREFIX,
    SupervisedSweep,
    smoke_trials,
    tensorboard_scalars,
)
from tests.ray_nodes import RayCluster
from tests.smoke_matrix import smoke_matrix

CIFAR = ROOT / "experiments" / "resnet_cifar10.py"
# Sweeps that other tests read too (conftest's session runs on files the tests write).
SHARED_SWEEPS = {"resnet_cifar10": "cifar_sweep", "bert_sst2": "sst2_sweep"}


@pytest.mark.parametrize("path", smoke_matrix(SUPERVISED_EXPERIMENTS), ids=lambda p: p.stem)
def test_smoke_run_trains_checkpoints_and_logs(
    path: Path, storage: Path, request: pytest.FixtureRequest
) -> None:
    if path.stem in SHARED_SWEEPS:
        sweep: SupervisedSweep = request.getfixturevalue(SHARED_SWEEPS[path.stem])
        experiment_dir, trials = sweep.experiment_dir, sweep.trials()
        assert trials and all(t["status"] == "OK" for t in trials)
    else:
        # Asked for here only: every run CI makes in this file is a shared sweep, and the
        # module's Ray would start and stop for none of them (~16 s of CI).
        ray_cluster: RayCluster = request.getfixturevalue("ray_cluster")
        join = ("--address", ray_cluster.address)
        trials = smoke_trials(path, storage, *join, env=ray_cluster.env)
        experiment_dir = storage / path.stem
    for trial in trials:
        _assert_supervised_trial(trial, experiment_dir / trial["trial"])


def test_supervised_sweep_goes_to_mlflow_and_tensorboard_hparams(
    cifar_sweep: SupervisedSweep,
) -> None:
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    from tests.tracking_readers import check_run_tags, hparams_sessions, metric_steps, mlflow_runs

    experiment_dir = cifar_sweep.experiment_dir
    uri = cifar_sweep.mlflow_uri
    assert uri is not None
    runs = mlflow_runs(uri, SupervisedSweep.MLFLOW_EXPERIMENT)
    assert len(runs) == len(cifar_sweep.trials()) == 2
    client = MlflowClient(uri)
    for mlflow_run in runs:
        assert {"lr", "weight_decay", "batch_size", "model"} <= set(mlflow_run.data.params)
        iterations = metric_steps(client, mlflow_run.info.run_id, metrics.TRAINING_ITERATION)
        for key in (metrics.VALIDATION_ACCURACY, metrics.TRAIN_LOSS, metrics.EPOCH):
            assert metric_steps(client, mlflow_run.info.run_id, key) == iterations, key
        check_run_tags(mlflow_run, CIFAR)

    sessions = hparams_sessions(experiment_dir)
    assert len(sessions) == 2
    for hparams in sessions.values():
        assert {"lr", "weight_decay", "batch_size"} <= set(hparams), hparams
    assert len({h["lr"] for h in sessions.values()}) == 2  # each trial's own value


def _assert_supervised_trial(trial: dict, trial_dir: Path) -> None:
    """Two epochs ran and reported validation accuracy; the last checkpoint restores into
    the model with Ray Train's Checkpoint API and classifies a batch; TensorBoard holds
    every supervised metric."""
    progress = pd.read_csv(trial_dir / "progress.csv")
    assert list(progress[metrics.EPOCH]) == [1, 2]
    assert list(progress[metrics.TRAINING_ITERATION]) == [1, 2]
    assert progress[metrics.VALIDATION_ACCURACY].between(0, 1).all()
    assert (progress[metrics.SAMPLES_PER_SECOND] > 0).all()
    assert (progress[metrics.WORKERS] == 1).all()  # --smoke: one CPU worker
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


def test_a_one_node_ray_starts_no_preemption_watcher(cifar_sweep: SupervisedSweep) -> None:
    """Ray Train's preemption watcher (an actor per Train run) has nowhere to move a run
    on one node; the suite leaves it out there (rlsuite/supervised/trainable.py). Each Ray
    worker's log opens with the name of the actor it ran."""
    logs = cifar_sweep.experiment_dir / "logs" / "ray"
    actors = [
        line.removeprefix(":actor_name:")
        for log in logs.glob("worker-*.out")
        for line in log.read_text().splitlines()[:2]
        if line.startswith(":actor_name:")
    ]
    assert actors.count("RayTrainWorker") == len(cifar_sweep.trials()) == 2, actors
    assert "PreemptionWatcher" not in actors, actors
