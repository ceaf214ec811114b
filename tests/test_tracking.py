"""Tracking (rlsuite/tracking, docs/tracking.md): a real MLflow server on 127.0.0.1 with a
SQLite store, W&B offline, TensorBoard's HParams data, PBT perturbations in both trackers,
and the refusals before Ray starts."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import metadata as hparams_metadata
from tensorboard.plugins.hparams import plugin_data_pb2

from rlsuite import metrics
from tests.helpers import ROOT, free_port, run_cli

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("wandb")
from mlflow.tracking import MlflowClient  # noqa: E402
from wandb.proto import wandb_internal_pb2  # noqa: E402

EXPERIMENTS = ROOT / "experiments"
SERVER_START_S = 240  # `mlflow server` took ~55 s to answer on 2 busy vCPUs
PROJECT = "rlsuite-test"


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`mlflow server` on 127.0.0.1, SQLite store and artifacts in a temp dir, in a
    session of its own: stopping it signals that session only (server, uvicorn worker)."""
    folder = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    uri = f"http://127.0.0.1:{port}"
    command = [
        *(sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port)),
        *("--workers", "1", "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}"),
        *("--default-artifact-root", str(folder / "artifacts")),
    ]
    # Without MLflow's job runner (three more processes, for GenAI jobs), on 2 vCPUs.
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    with (folder / "server.log").open("wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=log, env=env, start_new_session=True)
    try:
        _wait_for_health(uri, server, folder / "server.log")
        yield uri
    finally:
        _stop(server)


def _wait_for_health(uri: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"mlflow server exited: {log.read_text()[-2000:]}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{uri}/health", timeout=2) as answer,
        ):
            if answer.status == 200:
                return
        time.sleep(1)
    raise TimeoutError(f"mlflow server at {uri} did not answer in {SERVER_START_S} s")


def _stop(server: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        server.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=30)


def _runs(tracking_uri: str, experiment_name: str) -> list[Any]:
    client = MlflowClient(tracking_uri)
    experiment = client.get_experiment_by_name(experiment_name)
    assert experiment is not None, f"no MLflow experiment {experiment_name}"
    return list(client.search_runs([experiment.experiment_id]))


def _steps(client: MlflowClient, run_id: str, key: str) -> list[int]:
    return sorted(m.step for m in client.get_metric_history(run_id, key))


def _check_run_tags(run: Any, experiment_file: Path) -> None:
    tags = run.data.tags
    assert tags["experiment_file"] == str(experiment_file)
    assert Path(tags["checkpoint"]).is_dir(), tags
    if (ROOT / ".git").exists():
        assert len(tags["git_commit"]) == 40, tags


def test_rl_run_goes_to_an_mlflow_server_and_wandb_offline(
    mlflow_server: str, tmp_path: Path
) -> None:
    path = EXPERIMENTS / "ppo_cartpole.py"
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path / "wandb")}
    flags = ("--seed", "3", "--mlflow", mlflow_server, "--wandb", PROJECT)
    run = run_cli(path, "--smoke", *flags, storage=tmp_path / "results", env=env)
    assert run.returncode == 0, run.stderr[-3000:]

    [mlflow_run] = _runs(mlflow_server, "ppo_cartpole")  # default: the run's name
    assert mlflow_run.info.status == "FINISHED"
    params = mlflow_run.data.params
    assert params["env"] == "classic/cartpole" and params["seed"] == "3", params
    assert not [k for k in mlflow_run.data.metrics if k.startswith("config/")]
    client = MlflowClient(mlflow_server)
    for key in (metrics.EPISODE_RETURN_MEAN, metrics.TRAINING_ITERATION, metrics.POLICY_LOSS):
        assert _steps(client, mlflow_run.info.run_id, key) == [1, 2], key
    assert mlflow_run.data.tags["seed"] == "3"
    _check_run_tags(mlflow_run, path)

    [wandb_run] = read_wandb_runs(tmp_path / "wandb")
    assert wandb_run["group"] == "ppo_cartpole" and wandb_run["project"] == PROJECT
    assert wandb_run["config"]["seed"] == 3 and wandb_run["config"]["env"] == "classic/cartpole"
    history = wandb_run["history"]
    assert [row[metrics.TRAINING_ITERATION] for row in history] == [1, 2]
    assert all(metrics.EPISODE_RETURN_MEAN in row for row in history), history


def test_supervised_sweep_goes_to_mlflow_and_tensorboard_hparams(
    mlflow_server: str, tmp_path: Path
) -> None:
    path = EXPERIMENTS / "resnet_cifar10.py"
    flags = ("--mlflow", mlflow_server, "--mlflow-experiment", "supervised-test")
    run = run_cli(path, "--smoke", *flags, storage=tmp_path / "results")
    assert run.returncode == 0, run.stderr[-3000:]
    trials = run.summary("resnet_cifar10")["trials"]

    runs = _runs(mlflow_server, "supervised-test")
    assert len(runs) == len(trials) == 2
    client = MlflowClient(mlflow_server)
    for mlflow_run in runs:
        assert {"lr", "weight_decay", "batch_size", "model"} <= set(mlflow_run.data.params)
        iterations = _steps(client, mlflow_run.info.run_id, metrics.TRAINING_ITERATION)
        for key in (metrics.VALIDATION_ACCURACY, metrics.TRAIN_LOSS, metrics.EPOCH):
            assert _steps(client, mlflow_run.info.run_id, key) == iterations, key
        _check_run_tags(mlflow_run, path)

    sessions = hparams_sessions(tmp_path / "results" / "resnet_cifar10")
    assert len(sessions) == 2
    for hparams in sessions.values():
        assert {"lr", "weight_decay", "batch_size"} <= set(hparams), hparams
    assert len({h["lr"] for h in sessions.values()}) == 2  # each trial's own value


# slow (CI time): CI sends an RL run and a supervised sweep to MLflow and W&B above;
# this adds PBT's perturbation records.
@pytest.mark.slow
def test_pbt_perturbations_go_to_mlflow_wandb_and_hparams(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "WANDB_MODE": "offline"}
    run = run_cli(
        EXPERIMENTS / "pbt_ppo_cartpole.py",
        "--smoke",
        *("--stop", "training_iteration=3"),  # smoke PBT syncs and exploits every iteration
        *("--mlflow", store, "--wandb", PROJECT),
        storage=tmp_path / "results",
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    experiment_dir = tmp_path / "results" / "pbt_ppo_cartpole"
    mlflow_runs = _runs(store, "pbt_ppo_cartpole")
    assert len(mlflow_runs) == len(run.summary("pbt_ppo_cartpole")["trials"]) == 2
    trial_ids = {r.data.tags["trial_id"] for r in mlflow_runs}

    exploits = []
    for mlflow_run in mlflow_runs:
        for key, value in mlflow_run.data.tags.items():
            if key.startswith("pbt/exploit_at_"):
                record = json.loads(value)
                assert record["exploited_trial"] in trial_ids - {mlflow_run.data.tags["trial_id"]}
                assert record["new_values"], record
                exploits.append(record)
    assert exploits, "no PBT exploit reached MLflow"

    wandb_runs = read_wandb_runs(experiment_dir)  # no WANDB_DIR: the run's own folder
    assert len(wandb_runs) == 2
    assert any(r["config"].get("pbt_exploits") for r in wandb_runs), "none in W&B"
    assert any(k.startswith("pbt/") for r in wandb_runs for row in r["history"] for k in row)

    sessions = hparams_sessions(experiment_dir)
    assert len(sessions) == 2
    for hparams in sessions.values():  # the searched and the perturbed keys
        assert {"lr", "entropy_coeff", "clip_param"} <= set(hparams), hparams


# Readers of what the trackers wrote.
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
