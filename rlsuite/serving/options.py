"""Everything `python -m rlsuite.serve` takes, as one dataclass (flags = Python arguments)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Backend = Literal["torch", "onnx"]
BACKENDS: tuple[Backend, ...] = ("torch", "onnx")
Proxy = Literal["serve", "haproxy"]
PROXIES: tuple[Proxy, ...] = ("serve", "haproxy")


@dataclass(frozen=True)
class ServeOptions:
    path: Path
    """Results directory, trial directory or checkpoint directory."""
    trial: str | None = None
    checkpoint: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    replicas: int = 1
    num_cpus: float = 1.0
    """CPUs per replica."""
    num_gpus: float = 0.0
    """GPUs per replica (the model runs on the CPU all the same for now)."""
    max_batch_size: int = 32
    """Requests one forward pass answers at most (1: no batching)."""
    batch_wait_ms: float = 2.0
    """How long a batch waits for more requests after its first."""
    explore: bool = False
    access_log: bool = False
    """Serve's access log, a line per request in the replicas' logs (off: refused requests
    still get their one line; on, it cost 11% of a busy replica's CPU, docs/serving.md)."""
    backend: Backend = "torch"
    proxy: Proxy = "serve"
    """serve: Serve's HTTP proxy actor; haproxy: Serve's HAProxy ingress, which passes
    requests straight to the replicas' own HTTP servers (rlsuite.serving.haproxy)."""
    address: str | None = None
    """A running Ray cluster to deploy on (`auto`, `ray://...`); none: a local Ray."""
    start_timeout_s: float = 300.0
    """How long the replicas may take to load the model and serve before the server gives
    up (Serve's own wait has no end)."""
    logs_dir: Path | None = None
    """Where Ray's and Serve's own output goes (default: a new temporary directory)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServeOptions:
        return cls(**{k: v for k, v in vars(args).items() if k in cls.__dataclass_fields__})
