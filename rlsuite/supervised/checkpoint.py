"""Supervised checkpoints: what the loop writes each epoch and how to read it back.

A checkpoint directory holds `model.pt` (the model's state dict, without DDP's or
torch.compile's wrappers), `optimizer.pt`, `scheduler.pt` and `state.json` (epochs done,
the trial's SupervisedConfig, the model builder's JSON-able keyword arguments), plus a
data set's extras (a tokenizer). Read it with Ray Train's own API:

    checkpoint = ray.train.Checkpoint.from_directory("results/.../checkpoint_000009")
    model, config = rlsuite.supervised.checkpoint.load_model(checkpoint)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ray.train
import torch
from torch.nn.parallel import DistributedDataParallel

from rlsuite.supervised import optim, registry
from rlsuite.supervised.config import SupervisedConfig
from rlsuite.supervised.training_state import Run

MODEL_FILE = "model.pt"
OPTIMIZER_FILE = "optimizer.pt"
SCHEDULER_FILE = "scheduler.pt"
STATE_FILE = "state.json"


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The user's model inside torch.compile's and DDP's wrappers."""
    model = getattr(model, "_orig_mod", model)
    if isinstance(model, DistributedDataParallel):
        model = model.module
    return model


def save(directory: Path, run: Run, epoch: int) -> None:
    torch.save(unwrap(run.model).state_dict(), directory / MODEL_FILE)
    torch.save(run.optimizer.state_dict(), directory / OPTIMIZER_FILE)
    torch.save(run.scheduler.state_dict(), directory / SCHEDULER_FILE)
    state = {
        "epoch": epoch,
        "config": run.config.to_dict(),
        "model_kwargs": _json_able(run.splits.model_kwargs),
    }
    (directory / STATE_FILE).write_text(json.dumps(state, indent=2))
    if run.splits.save_extras is not None:
        run.splits.save_extras(str(directory))


def restore(checkpoint: ray.train.Checkpoint, run: Run) -> int:
    """Restore weights, optimizer and schedule into `run`; return the epochs done. The
    run's config's lr, momentum and weight decay then replace the checkpoint's (PBT)."""
    with checkpoint.as_directory() as path:
        directory = Path(path)
        weights = torch.load(directory / MODEL_FILE, map_location=run.device)
        unwrap(run.model).load_state_dict(weights)
        run.optimizer.load_state_dict(
            torch.load(directory / OPTIMIZER_FILE, map_location=run.device)
        )
        run.scheduler.load_state_dict(torch.load(directory / SCHEDULER_FILE))
        epoch = int(read_state(directory)["epoch"])
    # The schedule goes by epochs: the checkpoint's step count would place a trial whose
    # epochs take another number of steps (a PBT exploit across batch sizes, an elastic
    # restart on fewer workers) at another epoch of its schedule.
    run.scheduler.last_epoch = epoch * run.steps_per_epoch
    optim.apply_config(run.config, run.optimizer, run.scheduler)
    return epoch


def read_state(directory: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((directory / STATE_FILE).read_text())
    return state


def load_model(checkpoint: ray.train.Checkpoint) -> tuple[torch.nn.Module, SupervisedConfig]:
    """The trained model (on CPU, in eval mode) and the config it was trained with."""
    with checkpoint.as_directory() as path:
        directory = Path(path)
        state = read_state(directory)
        config = SupervisedConfig.from_dict(state["config"])
        model = registry.build_model(config, state.get("model_kwargs", {}))
        model.load_state_dict(torch.load(directory / MODEL_FILE, map_location="cpu"))
    return model.eval(), config


def _json_able(values: Any) -> dict[str, Any]:
    """The builder arguments that survive JSON (sizes, names); objects are left out, and
    their data sets restore with their own loaders (text: `text.load_for_inference`)."""
    kept = {}
    for key, value in dict(values).items():
        try:
            json.dumps(value)
        except TypeError:
            continue
        kept[key] = value
    return kept
