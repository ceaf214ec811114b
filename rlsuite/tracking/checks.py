"""Refusals of tracking flags before Ray starts: a missing package, an MLflow server that
does not answer, W&B without credentials in online mode. Each is one line with its fix."""

from __future__ import annotations

import importlib.util
import os
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from rlsuite.errors import UsageError
from rlsuite.tracking.settings import Tracking

SERVER_TIMEOUT_S = 5.0
"""How long an MLflow server may take to answer its health check."""
WANDB_NO_NETWORK_MODES = ("offline", "disabled", "dryrun")
REMOTE_NAMES = ("databricks", "databricks-uc", "uc")
"""Tracking URIs without a scheme that MLflow takes as remote stores, not folders."""
DB_DRIVERS = {
    "postgresql": ("psycopg2", "psycopg2-binary"),
    "postgresql+psycopg2": ("psycopg2", "psycopg2-binary"),
    "postgresql+psycopg": ("psycopg", "psycopg"),
    "mysql": ("MySQLdb", "mysqlclient"),
    "mysql+mysqldb": ("MySQLdb", "mysqlclient"),
    "mysql+pymysql": ("pymysql", "pymysql"),
    "mssql": ("pyodbc", "pyodbc"),
    "mssql+pyodbc": ("pyodbc", "pyodbc"),
}
"""SQLAlchemy's database schemes MLflow stores in: (the driver module, its pip package).
A missing driver fails in Tune's callback, once Ray has started."""


def check_tracking(tracking: Tracking) -> None:
    """UsageError, one line, unless every tracker the flags ask for can record."""
    if tracking.mlflow_experiment and not tracking.mlflow:
        raise UsageError("--mlflow-experiment names an MLflow experiment: add --mlflow URI")
    if tracking.mlflow:
        check_mlflow(tracking.mlflow)
    if tracking.wandb:
        check_wandb()


def check_mlflow(uri: str) -> None:
    if importlib.util.find_spec("mlflow") is None:
        raise UsageError(
            "--mlflow: the mlflow package is not installed; pip install mlflow "
            "(or pip install 'rlsuite[tracking]')"
        )
    scheme = urlsplit(uri).scheme
    if scheme in ("http", "https"):
        _check_server(uri)
    elif scheme == "sqlite":
        _check_sqlite(uri)
    elif scheme in DB_DRIVERS and importlib.util.find_spec(DB_DRIVERS[scheme][0]) is None:
        module, package = DB_DRIVERS[scheme]
        raise UsageError(
            f"--mlflow {uri}: SQLAlchemy's driver for {scheme} ({module}) is not installed; "
            f"pip install {package}"
        )
    elif scheme in ("", "file") and uri not in REMOTE_NAMES and not _file_store_allowed():
        # MLflow 3.17 raises on its first call to a file store, inside Tune's callback
        # after Ray has started: refuse it here, with MLflow's own two ways out.
        raise UsageError(
            f"--mlflow {uri}: MLflow keeps its file store in maintenance mode and refuses "
            "new runs in it; give a database store (--mlflow sqlite:///mlflow.db), or set "
            "MLFLOW_ALLOW_FILE_STORE=true to use the file store anyway"
        )


def _check_sqlite(uri: str) -> None:
    """SQLAlchemy creates the database file, not the folder that holds it; an in-memory
    database would keep nothing past the run."""
    path = uri.removeprefix("sqlite:").removeprefix("///")
    if path in ("", ":memory:") or path.startswith("//"):
        raise UsageError(
            f"--mlflow {uri}: no database file (an in-memory store keeps nothing); give "
            "sqlite:///mlflow.db (relative) or sqlite:////absolute/path/mlflow.db"
        )
    folder = Path(path.partition("?")[0]).parent
    if not folder.is_dir():
        raise UsageError(f"--mlflow {uri}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"--mlflow {uri}: the folder {folder} is not writable; pick another")


def _file_store_allowed() -> bool:
    """MLflow's own opt-out (`MLFLOW_ALLOW_FILE_STORE`, read as MLflow reads booleans)."""
    return os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").strip().lower() in ("true", "1")


def _check_server(uri: str) -> None:
    """An answer of any kind (even 401 from a server behind a login) is a server."""
    health = uri.rstrip("/") + "/health"
    try:
        with urllib.request.urlopen(health, timeout=SERVER_TIMEOUT_S):
            return
    except urllib.error.HTTPError:
        return
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise UsageError(
            f"--mlflow {uri}: no MLflow server answers there ({reason}); start one "
            "(mlflow server --host 127.0.0.1 --port 5000) or give a store (sqlite:///mlflow.db)"
        ) from None


def check_wandb() -> None:
    if importlib.util.find_spec("wandb") is None:
        raise UsageError(
            "--wandb: the wandb package is not installed; pip install wandb "
            "(or pip install 'rlsuite[tracking]')"
        )
    if os.environ.get("WANDB_MODE") in WANDB_NO_NETWORK_MODES or os.environ.get("WANDB_API_KEY"):
        return
    import wandb

    if not wandb.login(prompt=False, verify=False):  # reads ~/.netrc and W&B's settings
        raise UsageError(
            "--wandb: no W&B credentials; run `wandb login` (or set WANDB_API_KEY), "
            "or log offline with WANDB_MODE=offline"
        )
