"""A crashed env runner fails the run with the env's own error, not a KeyError later."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlsuite.launcher.failures import explain, root_exception
from tests.helpers import CliRun, run_cli

CRASHING_EXPERIMENT = '''"""PPO on an env that raises in step()."""
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.examples.envs.classes.cartpole_crashing import CartPoleCrashing

from rlsuite import Experiment, metrics

config = PPOConfig().environment(CartPoleCrashing, env_config={"p_crash": 0.05}).env_runners(num_env_runners=1)
experiment = Experiment(config=config, stop={metrics.TRAINING_ITERATION: 3})
'''


def _crashing_run(tmp_path: Path, storage: Path) -> tuple[CliRun, dict]:
    path = tmp_path / "crashing.py"
    path.write_text(CRASHING_EXPERIMENT)
    run = run_cli(path, "--smoke", storage=storage, timeout=300)
    assert run.returncode == 1
    (trial,) = run.summary("crashing")["trials"]
    assert trial["status"] == "ERROR"
    return run, trial


@pytest.mark.slow  # the dead runner's log can arrive late with another Ray on the machine (CI's xdist)
def test_env_runner_crash_fails_the_run_with_the_env_error(tmp_path: Path, storage: Path) -> None:
    run, trial = _crashing_run(tmp_path, storage)
    assert "EnvError: Simulated env crash" in run.stdout
    assert trial["error"]


@pytest.mark.slow
def test_env_runner_crash_summary_names_the_env_error(tmp_path: Path, storage: Path) -> None:
    """The summary's one-line error is the env's exception, read from the dead runner's
    log through Ray's state API. Slow-marked: with another Ray cluster running on the
    machine (CI's second pytest-xdist worker) that lookup sometimes finds no log in time
    and the summary falls back to Ray's "worker died" message; alone it passes."""
    _, trial = _crashing_run(tmp_path, storage)
    assert "EnvError: Simulated env crash" in trial["error"]


def test_root_exception_is_the_first_in_a_chain() -> None:
    log = [
        "2026 ERROR env_runner.py:282 -- step failed",
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in step',
        "ray.rllib.utils.error.EnvError: boom",
        "The above exception was the direct cause of the following exception:",
        "RuntimeError: wrapped",
    ]
    assert root_exception(log) == "ray.rllib.utils.error.EnvError: boom"


def test_explain_other_errors_gives_their_last_line() -> None:
    assert explain("Traceback...\n  File x\nValueError: bad lr\n") == "ValueError: bad lr"
