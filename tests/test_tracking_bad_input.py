"""Tracking flags the suite refuses before Ray starts: one line naming the problem and
the fix, exit 2, nothing written (the runs that reach MLflow and W&B: test_tracking.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, assert_rejected, run_main
from tests.ports import free_port

pytest.importorskip("mlflow")
pytest.importorskip("wandb")

EXPERIMENTS = ROOT / "experiments"
PROJECT = "rlsuite-test"
FILE_STORE_FIXES = ("sqlite:///mlflow.db", "MLFLOW_ALLOW_FILE_STORE=true")


@pytest.mark.parametrize(
    ("flags", "needles"),
    [
        (("--mlflow-experiment", "x"), ("add --mlflow URI",)),
        (("--mlflow", "http://127.0.0.1:{port}"), ("no MLflow server answers", "mlflow server")),
        (("--mlflow", "file:./mlruns"), FILE_STORE_FIXES),
        (("--mlflow", "mlruns"), FILE_STORE_FIXES),
        # SQLAlchemy creates the file, not its folder; these failed in Tune's callback.
        (("--mlflow", "sqlite:///no/such/folder/mlflow.db"), ("folder no/such/folder does",)),
        (("--mlflow", "sqlite:///:memory:"), ("in-memory store keeps nothing",)),
        (("--mlflow", "mysql+pymysql://db.example/mlflow"), ("pip install pymysql",)),
    ],
)
def test_bad_tracking_flags_are_refused(
    capsys: pytest.CaptureFixture[str],
    storage: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: tuple[str, ...],
    needles: tuple,
) -> None:
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    flags = tuple(f.format(port=free_port()) for f in flags)  # a port nobody listens on
    code = run_main(EXPERIMENTS / "ppo_cartpole.py", "--smoke", *flags, storage=storage)
    assert_rejected(capsys, code, storage, *needles)


@pytest.mark.parametrize(("package", "flag"), [("mlflow", "--mlflow"), ("wandb", "--wandb")])
def test_a_tracker_without_its_package_is_refused(
    capsys: pytest.CaptureFixture[str],
    storage: Path,
    monkeypatch: pytest.MonkeyPatch,
    package: str,
    flag: str,
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # as if not installed: find_spec is None
    monkeypatch.setenv("WANDB_MODE", "offline")
    code = run_main(EXPERIMENTS / "ppo_cartpole.py", flag, "file:./mlruns", storage=storage)
    assert_rejected(capsys, code, storage, f"pip install {package}")


def test_wandb_online_without_credentials_is_refused(
    capsys: pytest.CaptureFixture[str], storage: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = storage.parent / "home"
    home.mkdir()
    for name in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NETRC", str(home / ".netrc"))
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(home / ".config" / "wandb"))
    code = run_main(EXPERIMENTS / "ppo_cartpole.py", "--wandb", PROJECT, storage=storage)
    assert_rejected(capsys, code, storage, "wandb login", "WANDB_MODE=offline")


def test_mlflows_own_opt_out_lets_a_file_store_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With MLFLOW_ALLOW_FILE_STORE=true the launcher lets a file store pass, and MLflow
    does take runs in it (without the variable it raises: the refusal above)."""
    import mlflow

    from rlsuite.tracking.checks import check_mlflow

    uri = f"file:{tmp_path / 'mlruns'}"
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    check_mlflow(uri)
    mlflow.set_tracking_uri(uri)
    try:
        experiment = mlflow.set_experiment("opt-out")
        with mlflow.start_run(experiment_id=experiment.experiment_id):
            mlflow.log_metric("x", 1.0)
    finally:
        mlflow.set_tracking_uri(None)
    assert list((tmp_path / "mlruns").glob("*/*/metrics/x"))


def test_mlflows_remote_names_are_not_taken_for_file_stores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`databricks` has no scheme, yet MLflow takes it (and `databricks-uc`, `uc`) as remote."""
    from rlsuite.tracking.checks import REMOTE_NAMES, check_mlflow

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    for name in REMOTE_NAMES:
        check_mlflow(name)
