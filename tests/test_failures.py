"""A crashed env runner fails the run with the env's own error, not a KeyError later."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from ray.tune.error import TuneError

from rlsuite.launcher import failures, tuner
from rlsuite.launcher.failures import explain
from rlsuite.launcher.progress import error_line
from rlsuite.launcher.shutdown import SHUTDOWN
from rlsuite.tracebacks import first_raised
from tests.helpers import CliRun, run_cli
from tests.progress_feed import StagedTrial

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


def test_first_raised_is_the_first_in_a_chain() -> None:
    log = [
        "2026 ERROR env_runner.py:282 -- step failed",
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in step',
        "ray.rllib.utils.error.EnvError: boom",
        "The above exception was the direct cause of the following exception:",
        "RuntimeError: wrapped",
    ]
    assert first_raised(log) == "ray.rllib.utils.error.EnvError: boom (at x.py:1)"
    assert first_raised(log[:2]) is None  # no exception yet: the caller waits for the log


def test_explain_other_errors_gives_their_exception() -> None:
    assert explain("Traceback...\n  File x\nValueError: bad lr\n") == "ValueError: bad lr"
    assert explain("a message that is no traceback\n") == "a message that is no traceback"


SITE = "/venv/lib/python3.11/site-packages"
# Trimmed from trials' error.txt (Ray 2.60): what RLlib makes of a user's error.
ENV_STEP = f"""Failure # 1 (occurred at 2026-11-28_05-41-12)
ray::PPO.train() (pid=14020, ip=192.0.2.2, repr=PPO(env=bad_step))
  File "{SITE}/gymnasium/core.py", line 327, in step
    return self.env.step(action)
  File "/home/me/my_env.py", line 17, in step
    raise KeyError("step exploded")
KeyError: 'step exploded'

The above exception was the direct cause of the following exception:

ray::PPO.train() (pid=14020, ip=192.0.2.2, repr=PPO(env=bad_step))
  File "{SITE}/ray/rllib/env/env_runner.py", line 291, in _try_env_step
    raise RuntimeError from e
RuntimeError
"""
MODULE_SETUP = f"""Failure # 1 (occurred at 2026-11-28_05-49-02)
  File "/home/me/my_module.py", line 8, in setup
    raise AttributeError("my module setup broke")
AttributeError: my module setup broke

During handling of the above exception, another exception occurred:

  File "{SITE}/ray/_common/deprecation.py", line 58, in deprecation_warning
    raise ValueError(msg)
ValueError: `RLModule(config=[RLModuleConfig])` has been deprecated. Use `RLModule(...)` instead.
"""
MULTIAGENT_RESET = f"""Failure # 1 (occurred at 2026-11-28_06-04-27)
  File "/home/me/my_spread.py", line 11, in reset
    raise OSError("ma reset exploded")
OSError: ma reset exploded

The above exception was the direct cause of the following exception:

  File "{SITE}/ray/rllib/utils/pre_checks/env.py", line 48, in check_multiagent_environments
    raise ValueError(
ValueError: Your environment (<Broken<rllib-multi-agent-env-v0>>) does not abide to the new gymnasium-style API!
From Ray 2.3 on, RLlib only supports the new (gym>=0.26 or gymnasium) Env APIs.
terminated prematurely due to some time constraint or other kind of horizon setting.
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ENV_STEP, "KeyError: 'step exploded' (at /home/me/my_env.py:17)"),
        (MODULE_SETUP, "AttributeError: my module setup broke (at /home/me/my_module.py:8)"),
        (MULTIAGENT_RESET, "OSError: ma reset exploded (at /home/me/my_spread.py:11)"),
    ],
    ids=["env step re-raised bare", "module setup retried", "reset wrapped in a long message"],
)
def test_explain_names_the_users_own_error_and_where(text: str, expected: str) -> None:
    """Not RLlib's wrapper (a bare `RuntimeError`, a deprecation notice, the last line of a
    message of many), which the last line of the error named."""
    assert explain(text) == expected


def test_explain_leaves_out_a_place_inside_the_libraries() -> None:
    text = f'  File "{SITE}/numpy/core.py", line 3, in f\nValueError: Output array is the wrong shape\n'
    assert explain(text) == "ValueError: Output array is the wrong shape"


def test_explain_gives_the_last_failure_of_an_error_txt() -> None:
    """Tune appends a block per failure (restarts, --resume): the line after a restart or
    at the end describes the failure that just happened, not the first one."""
    assert explain(ENV_STEP + MODULE_SETUP.replace("Failure # 1", "Failure # 2")) == (
        "AttributeError: my module setup broke (at /home/me/my_module.py:8)"
    )


def test_a_failure_line_describes_the_trials_latest_failure(tmp_path: Path) -> None:
    trial = StagedTrial(tmp_path, 0, max_failures=2)
    trial.handle_error(TuneError("KeyError: 'obs'"))  # Tune's own error.txt blocks
    trial.handle_error(TuneError("ValueError: bad lr"))
    assert error_line(trial) == "ValueError: bad lr"


# A trial whose env runner died (Ray 2.60's ActorDiedError, trimmed): its env's own
# exception is in the runner's log, which `explain` reads through Ray's state API.
RUNNER_DIED = """Failure # 1 (occurred at 2026-11-28_05-41-12)
ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.
\tclass_name: SingleAgentEnvRunner
\tactor_id: 5d4a1f2e3b
\tpid: 4242
\tnamespace: 7c1e-4a2b
\tip: 192.0.2.2
The actor is dead because its worker process has died.
"""
RUNNER_LOG = [
    "Traceback (most recent call last):",
    '  File "/home/me/my_env.py", line 17, in step',
    "ray.rllib.utils.error.EnvError: Simulated env crash",
]


@pytest.fixture
def runner_log(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """The lookups of a dead runner's log `explain` makes (pid, node), each answered by
    the log service only after a minute (a dashboard too busy to answer)."""
    asked: list[tuple[int, str]] = []

    def read_log(pid: int, node_ip: str, address: str | None, timeout_s: float) -> list[str]:
        asked.append((pid, node_ip))
        time.sleep(60)
        return RUNNER_LOG

    monkeypatch.setattr(failures, "_read_log", read_log)
    monkeypatch.setattr(failures, "_stop_asked", tuner.stop_asked)  # as tuner.run wires it
    return asked


def test_a_dead_runners_line_waits_for_its_log_a_few_seconds_at_most(
    runner_log: list[tuple[int, str]],
) -> None:
    """In Tune's loop, where a SIGTERM has 20 s to end the run: up to 8 lookups of 30 s
    each and the sleeps between them held the loop 36 s and more."""
    started = time.monotonic()
    assert explain(RUNNER_DIED).startswith("ray.exceptions.ActorDiedError: The actor died")
    assert time.monotonic() - started < failures.LOOKUP_S + 1.0
    assert runner_log == [(4242, "192.0.2.2")]


@pytest.mark.parametrize("stop", ["requested", "terminated"])
def test_no_runner_log_lookup_once_a_stop_was_asked(
    runner_log: list[tuple[int, str]], monkeypatch: pytest.MonkeyPatch, stop: str
) -> None:
    """`requested`: Ctrl-C or SIGTERM while trials run; `terminated`: the summary after a
    SIGTERM, when the sender's kill is seconds away."""
    monkeypatch.setattr(SHUTDOWN, stop, True)
    started = time.monotonic()
    assert explain(RUNNER_DIED).startswith("ray.exceptions.ActorDiedError: The actor died")
    assert time.monotonic() - started < 1.0
    assert runner_log == []


def test_a_stop_asked_during_the_lookup_ends_its_wait(
    runner_log: list[tuple[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(failures, "LOOKUP_S", 30.0)
    signal_at = threading.Timer(0.3, setattr, (SHUTDOWN, "requested", True))
    signal_at.start()
    started = time.monotonic()
    try:
        explain(RUNNER_DIED)
        assert time.monotonic() - started < 2.0
    finally:
        signal_at.join()
        SHUTDOWN.requested = False


def test_a_dead_runners_line_names_the_exception_in_its_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The log reaches the log service a moment after the runner died: asked again."""
    answers = [[], RUNNER_LOG]
    monkeypatch.setattr(failures, "_read_log", lambda *_: answers.pop(0))
    monkeypatch.setattr(failures, "_stop_asked", tuner.stop_asked)
    assert explain(RUNNER_DIED) == (
        "SingleAgentEnvRunner (pid 4242) failed: ray.rllib.utils.error.EnvError: "
        "Simulated env crash (at /home/me/my_env.py:17)"
    )
