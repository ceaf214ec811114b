"""Shared fixtures: run the real CLI in a subprocess, read what it left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from rlsuite.run import main

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = sorted(p for p in (ROOT / "experiments").glob("*.py") if p.name != "__init__.py")


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    storage: Path

    def summary(self, name: str) -> dict:
        return json.loads((self.storage / name / "summary.json").read_text())


def run_cli(
    *args: str | Path, storage: Path, timeout: float = 600, env: dict[str, str] | None = None
) -> CliRun:
    """`python -m rlsuite.run ARGS --storage-path STORAGE`, as a user runs it."""
    command = [sys.executable, "-m", "rlsuite.run", *map(str, args), "--storage-path", str(storage)]
    env = {**(env or os.environ), "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env
    )
    return CliRun(done.returncode, done.stdout, done.stderr, storage)


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    return tmp_path / "results"


# Bad-input helpers: the CLI in this process, for speed; tests/test_bad_input.py also
# checks a real process.
def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_main(*args: str | Path, storage: Path) -> int:
    try:
        return main([*map(str, args), "--storage-path", str(storage)])
    except SystemExit as exit:  # argparse's own errors
        return int(exit.code or 0)


def assert_rejected(
    capsys: pytest.CaptureFixture[str], code: int, storage: Path, *needles: str
) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not storage.exists(), "bad input must not create the results directory"
    return lines[0]
