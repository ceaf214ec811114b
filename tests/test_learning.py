"""Learning tests: slow, real, short. Run with `pytest -m slow`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli


@pytest.mark.slow
def test_ppo_cartpole_reaches_150(storage: Path) -> None:
    run = run_cli(
        ROOT / "experiments" / "ppo_cartpole.py",
        "--stop",
        "episode_return_mean=150",
        "--stop",
        "env_steps=200000",
        "--as-test",
        storage=storage,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (trial,) = run.summary("ppo_cartpole")["trials"]
    assert trial["best_episode_return_mean"] >= 150


def test_as_test_exits_1_when_the_return_is_missed(storage: Path) -> None:
    run = run_cli(
        ROOT / "experiments" / "ppo_cartpole.py",
        "--smoke",
        "--as-test",  # smoke stops after two tiny iterations: 450 is out of reach
        storage=storage,
    )
    assert run.returncode == 1, run.stderr[-2000:]
    assert "as-test: failed" in run.stderr
