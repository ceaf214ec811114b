"""A crashed env runner fails the run with the env's own error, not a KeyError later."""

from __future__ import annotations

from pathlib import Path

from rlsuite.failures import explain, root_exception
from tests.conftest import run_cli

CRASHING_EXPERIMENT = '''"""PPO on an env that raises in step()."""
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.examples.envs.classes.cartpole_crashing import CartPoleCrashing

from rlsuite import Experiment, metrics

config = PPOConfig().environment(CartPoleCrashing, env_config={"p_crash": 0.05}).env_runners(num_env_runners=1)
experiment = Experiment(config=config, stop={metrics.TRAINING_ITERATION: 3})
'''


def test_env_runner_crash_reports_the_env_error(tmp_path: Path, storage: Path) -> None:
    path = tmp_path / "crashing.py"
    path.write_text(CRASHING_EXPERIMENT)
    run = run_cli(path, "--smoke", storage=storage, timeout=300)
    assert run.returncode == 1
    (trial,) = run.summary("crashing")["trials"]
    assert trial["status"] == "ERROR"
    assert "EnvError: Simulated env crash" in trial["error"]
    assert "EnvError: Simulated env crash" in run.stdout


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
