"""Readers of what the trackers wrote (MLflow runs, TensorBoard's HParams data, offline
W&B runs), for tests/test_tracking.py and the supervised smoke matrix's tracked run."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mlflow.tracking import MlflowClient
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import metadata as hparams_metadata
from tensorboard.plugins.hparams import plugin_data_pb2
from wandb.proto import wandb_internal_pb2

from tests.helpers import ROOT


def mlflow_runs(tracking_uri: str, experiment_name: str) -> list[Any]:
    client = MlflowClient(tracking_uri)
    experiment = client.get_experiment_by_name(experiment_name)
    assert experiment is not None, f"no MLflow experiment {experiment_name}"
    return list(client.search_runs([experiment.experiment_id]))


def metric_steps(client: MlflowClient, run_id: str, key: str) -> list[int]:
    return sorted(m.step for m in client.get_metric_history(run_id, key))


def check_run_tags(run: Any, experiment_file: Path) -> None:
    tags = run.data.tags
    assert tags["experiment_file"] == str(experiment_file)
    assert Path(tags["checkpoint"]).is_dir(), tags
    if (ROOT / ".git").exists():
        assert len(tags["git_commit"]) == 40, tags


def hparams_sessions(experiment_dir: Path) -> dict[str, dict[str, Any]]:
    """The HParams plugin's session-start data per trial folder: hparam name -> value."""
    sessions: dict[str, dict[str, Any]] = {}
    for events in sorted(experiment_dir.glob("*/events.out.tfevents.*")):
        accumulator = EventAccumulator(str(events))
        accumulator.Reload()
        try:  # a PBT trial writes a file per restart; hparams go to its last one
            content = accumulator.PluginTagToContent(hparams_metadata.PLUGIN_NAME)
        except KeyError:
            continue
        data = plugin_data_pb2.HParamsPluginData.FromString(
            content[hparams_metadata.SESSION_START_INFO_TAG]
        )
        values = data.session_start_info.hparams
        sessions[events.parent.name] = {
            name: value.WhichOneof("kind") and getattr(value, value.WhichOneof("kind"))
            for name, value in values.items()
        }
    return sessions


def read_wandb_runs(folder: Path) -> list[dict[str, Any]]:
    """Offline W&B runs under `folder`: project, group, config (with later updates) and
    history rows, read from each run's transaction log (`run-ID.wandb`)."""
    runs = []
    for log in sorted(folder.glob("wandb/offline-run-*/run-*.wandb")):
        run: dict[str, Any] = {"config": {}, "history": []}
        for record in _wandb_records(log.read_bytes()):
            kind = record.WhichOneof("record_type")
            if kind == "run":
                run["project"], run["group"] = record.run.project, record.run.run_group
                run["config"].update(_items(record.run.config.update))
            elif kind == "config":
                run["config"].update(_items(record.config.update))
            elif kind == "history":
                run["history"].append(_items(record.history.item))
        runs.append(run)
    return runs


def _items(items: Any) -> dict[str, Any]:
    return {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in items}


def _wandb_records(data: bytes) -> Iterator[Any]:
    """W&B's transaction log: LevelDB's log format (32 KiB blocks of records, each with a
    7-byte header: CRC, length, kind full/first/middle/last) after a 7-byte file header."""
    block, header = 32768, 7
    position, pending = header, b""
    while position + header <= len(data):
        if block - position % block < header:  # the block's tail is padding
            position += block - position % block
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + header])
        chunk = data[position + header : position + header + length]
        position += header + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            yield wandb_internal_pb2.Record.FromString(pending)
