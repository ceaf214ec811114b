"""Tracking (rlsuite/tracking, docs/tracking.md): a real MLflow server on 127.0.0.1 with a
SQLite store (its run starts from a user's folder that holds an `envs/` package of theirs,
for test_packaging.py), W&B offline, TensorBoard's HParams data, PBT perturbations in both
trackers, and the refusals before Ray starts. A supervised sweep's tracking is checked on
the supervised smoke matrix's resnet_cifar10 run (test_experiments_supervised.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlsuite import metrics
from tests.helpers import ROOT, run_cli, user_env, users_own_envs_package
from tests.ports import free_port

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("wandb")
from mlflow.tracking import MlflowClient  # noqa: E402

from tests.tracking_readers import (  # noqa: E402
    check_run_tags,
    hparams_sessions,
    metric_steps,
    mlflow_runs,
    read_wandb_runs,
)

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


def test_rl_run_goes_to_an_mlflow_server_and_wandb_offline(
    mlflow_server: str, tmp_path: Path
) -> None:
    path = EXPERIMENTS / "ppo_cartpole.py"
    env = user_env({**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path / "wandb")})
    flags = ("--seed", "3", "--mlflow", mlflow_server, "--wandb", PROJECT)
    # --as-test as in a CI job: smoke stops after two tiny iterations, so the file's return of
    # 450 is missed and the run exits 1, after its trial finished and was sent to both
    # trackers in full (the suite's only CI check of --as-test's exit: one run, CI time).
    # Run as a user runs it from a folder of their own that holds an `envs/` package, which
    # neither hides the suite's env registry nor is hidden by it (test_packaging.py's other
    # half; one run for both, CI time).
    work = users_own_envs_package(tmp_path / "work")
    storage = tmp_path / "results"
    run = run_cli(path, "--smoke", "--as-test", *flags, storage=storage, env=env, cwd=work)
    assert run.returncode == 1, run.stderr[-3000:]
    assert "as-test: failed" in run.stderr
    assert [t["status"] for t in run.summary("ppo_cartpole")["trials"]] == ["OK"]

    [mlflow_run] = mlflow_runs(mlflow_server, "ppo_cartpole")  # default: the run's name
    assert mlflow_run.info.status == "FINISHED"
    params = mlflow_run.data.params
    assert params["env"] == "classic/cartpole" and params["seed"] == "3", params
    assert not [k for k in mlflow_run.data.metrics if k.startswith("config/")]
    client = MlflowClient(mlflow_server)
    for key in (metrics.EPISODE_RETURN_MEAN, metrics.TRAINING_ITERATION, metrics.POLICY_LOSS):
        assert metric_steps(client, mlflow_run.info.run_id, key) == [1, 2], key
    assert mlflow_run.data.tags["seed"] == "3"
    check_run_tags(mlflow_run, path)

    [wandb_run] = read_wandb_runs(tmp_path / "wandb")
    assert wandb_run["group"] == "ppo_cartpole" and wandb_run["project"] == PROJECT
    assert wandb_run["config"]["seed"] == 3 and wandb_run["config"]["env"] == "classic/cartpole"
    history = wandb_run["history"]
    assert [row[metrics.TRAINING_ITERATION] for row in history] == [1, 2]
    assert all(metrics.EPISODE_RETURN_MEAN in row for row in history), history


# slow (CI time): CI sends an RL run (above) and a supervised sweep (the supervised smoke
# matrix) to the trackers;
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
    pbt_runs = mlflow_runs(store, "pbt_ppo_cartpole")
    assert len(pbt_runs) == len(run.summary("pbt_ppo_cartpole")["trials"]) == 2
    trial_ids = {r.data.tags["trial_id"] for r in pbt_runs}

    exploits = []
    for mlflow_run in pbt_runs:
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
