"""The Tune trial of a supervised experiment: a function trainable that runs a TorchTrainer.

Ray 2.60 runs Ray Train V2, where a Trainer is no longer handed to a Tuner: a Tune
function trainable launches the `TorchTrainer` instead ("Hyperparameter Tuning with Ray
Tune" in Ray's Train docs). Ray's `TuneReportCallback` forwards the workers' metrics to
Tune but no checkpoint, and PBT exploits and `--resume` restore Tune checkpoints. So
`ForwardToTrial` here sends each result with its checkpoint's path to the trial, which
reports both to Tune (`tune.report(metrics, checkpoint=...)`); Tune keeps the checkpoints
in the trial directory like an RLlib trial's. A restored trial hands its checkpoint to
the new Train run through `train_loop_config`.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import threading
import uuid
from pathlib import Path
from queue import Empty
from typing import Any

import ray.train
from ray import tune
from ray.train.torch import TorchTrainer
from ray.train.v2.api.callback import UserCallback
from ray.util.queue import Queue

from rlsuite.supervised import registry
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.loop import train_loop_per_worker
from rlsuite.supervised.validation_split import ExactValidation

TRAIN_RUNS_DIR = "train_runs"
POLL_S = 0.5
# How long Ray Train waits for its workers' placement group before it gives up and decides
# the group's size again (Ray 2.60: a retry, not a failure). A fixed-size run would ask for
# the same group again, so it waits long: resources were checked before Ray started (or on
# joining the cluster), and on a busy machine others' processes can hold them a while. An
# elastic run keeps Ray's 60 s: its policy sizes the group from a node list it refreshes
# every 20 s, so after a node is lost its first ask can still count that node, and only
# the retry sees what is left (measured: tests/test_node_loss.py's elastic run).
WORKER_START_TIMEOUT_S = "600"
ELASTIC_WORKER_START_TIMEOUT_S = "60"
# Ray Train's preemption watcher (an actor per Train run) lets a run leave a node that its
# cluster is draining. On a one-node Ray there is no other node to go to, so the suite
# turns it off there unless the environment says otherwise. Measured, resnet_cifar10.py
# --smoke (2 trials) on the embedded Ray, 2 alternating rounds: 47.5 and 45.7 s with it,
# 45.1 and 40.9 s without.
PREEMPTION_WATCHER_ENV_VAR = "RAY_TRAIN_ENABLE_PREEMPTION_WATCHER"


class ForwardToTrial(UserCallback):
    """Runs in the Train controller: hands rank 0's metrics and the persisted
    checkpoint to the Tune trial (the queue holds one, so training waits for Tune)."""

    def __init__(self, queue: Queue):
        self.queue = queue

    def after_report(
        self,
        run_context: Any,
        metrics: list[dict[str, Any]],
        checkpoint: ray.train.Checkpoint | None,
    ) -> None:
        self.queue.put((metrics[0], checkpoint))


def scaling_config(config: SupervisedConfig) -> ray.train.ScalingConfig:
    workers: int | tuple[int, int] = config.num_workers
    if config.max_workers is not None and config.max_workers > config.num_workers:
        workers = (config.num_workers, config.max_workers)
    return ray.train.ScalingConfig(
        num_workers=workers,  # type: ignore[arg-type]  # Train V2 takes (min, max) too
        use_gpu=config.use_gpu,
        resources_per_worker={
            "CPU": config.cpus_per_worker,
            **({"GPU": 1} if config.use_gpu else {}),
        },
    )


def worker_resources(config: SupervisedConfig) -> dict[str, float]:
    """What one trial's Train workers reserve in all."""
    resources = {"CPU": config.num_workers * config.cpus_per_worker}
    if config.use_gpu:
        resources["GPU"] = float(config.num_workers)
    return resources


def train_driver(trial_config: dict[str, Any], checkpoint_every: int = 1) -> None:
    """Tune function trainable: one Train run per start of the trial, a checkpoint every
    `checkpoint_every` epochs and after the last."""
    config = SupervisedConfig.from_dict(trial_config)
    loop_config: dict[str, Any] = {
        "config": config.to_dict(),
        "checkpoint": tune.get_checkpoint(),
        "checkpoint_every": checkpoint_every,
    }
    datasets = None
    if registry.dataset_entry(config.dataset).ray_data:
        splits = registry.load(config)
        datasets = {"train": splits.train, "validation": splits.validation}
        loop_config["splits"] = dataclasses.replace(splits, train=None, validation=None)
    elastic = isinstance(scaling_config(config).num_workers, tuple)
    timeout = ELASTIC_WORKER_START_TIMEOUT_S if elastic else WORKER_START_TIMEOUT_S
    os.environ.setdefault("RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S", timeout)
    if sum(node["Alive"] for node in ray.nodes()) == 1:
        os.environ.setdefault(PREEMPTION_WATCHER_ENV_VAR, "0")
    queue: Queue = Queue(maxsize=1, actor_options={"num_cpus": 0})
    storage = tune.get_context().get_storage()
    # A fresh run name each start: Train V2 would otherwise resume its own latest
    # checkpoint, not the one Tune restored this trial with (another trial's, under PBT).
    name = f"{TRAIN_RUNS_DIR}/{uuid.uuid4().hex[:8]}"
    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config=loop_config,
        scaling_config=scaling_config(config),
        run_config=ray.train.RunConfig(
            name=name,
            storage_path=storage.trial_fs_path,
            storage_filesystem=storage.storage_filesystem,
            callbacks=[ForwardToTrial(queue)],  # type: ignore[list-item]  # a V2 UserCallback
            # Tune keeps its own copy of each checkpoint: one here is enough.
            checkpoint_config=ray.train.CheckpointConfig(num_to_keep=1),
        ),
        datasets=datasets,
        dataset_config=ExactValidation(),
    )
    try:
        _run_and_forward(trainer, queue)
    finally:
        _remove_local(Path(storage.trial_fs_path) / name)


def _run_and_forward(trainer: TorchTrainer, queue: Queue) -> None:
    """`trainer.fit()` in a thread; its results reported to Tune from this one (Tune's
    session belongs to the trainable's thread)."""
    errors: list[BaseException] = []

    def fit() -> None:
        try:
            trainer.fit()
        except BaseException as error:  # re-raised in the trial's thread below
            errors.append(error)

    thread = threading.Thread(target=fit, name="train-run", daemon=True)
    thread.start()
    while thread.is_alive() or not queue.empty():
        try:
            metrics, checkpoint = queue.get(timeout=POLL_S)
        except Empty:
            continue
        if checkpoint is not None:  # Tune's own Checkpoint type for tune.report
            checkpoint = tune.Checkpoint(checkpoint.path, checkpoint.filesystem)
        tune.report(metrics, checkpoint=checkpoint)
    if errors:
        raise errors[0]


def _remove_local(path: Path) -> None:
    """The Train run's own copy of its last checkpoint, once Tune holds its copy."""
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
