"""No run lost to a signal: SIGTERM and Ctrl-C pause each trial at a checkpoint and exit 143
and 130 with the `--resume` line (the handler's steps unit-tested too), a SIGTERM to the
whole process group ends at once, a killed driver resumes within one checkpoint interval,
a killed env runner is survived."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

import rlsuite.run
from rlsuite.launcher import api
from rlsuite.launcher import shutdown as shutdown_module
from rlsuite.launcher.shutdown import Shutdown
from tests.helpers import ROOT, run_cli, run_main

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"
# Iterations of at least this long, so that a signal lands between two known iterations.
SLOW_ITERATIONS = ("--smoke", "--set", "reporting.min_time_s_per_iteration=1.0")
ITERATION_LINE = re.compile(r"\] iter\s+(\d+)")


def _start(storage: Path, *flags: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "rlsuite.run", str(CARTPOLE), *flags]
    return subprocess.Popen(
        [*command, "--storage-path", str(storage)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )


def _lines_until(driver: subprocess.Popen[str], iteration: int) -> Iterator[int]:
    """Iterations the driver prints, until `iteration` (fails after 300 s)."""
    assert driver.stdout is not None
    deadline = time.monotonic() + 300
    for line in driver.stdout:
        match = ITERATION_LINE.search(line)
        if match:
            yield int(match.group(1))
            if int(match.group(1)) >= iteration:
                return
        assert time.monotonic() < deadline, "the run never reached the iteration"
    raise AssertionError(f"the run ended before iteration {iteration}")


def _iterations(storage: Path) -> list[int]:

    result = next((storage / "ppo_cartpole").glob("PPO_*/result.json"))
    return [json.loads(line)["training_iteration"] for line in result.read_text().splitlines()]


# Each stop in turn, on one run: SIGTERM on the run, then Ctrl-C on the run it resumed.
STOPS = [(signal.SIGTERM, 143, "stopped by SIGTERM"), (signal.SIGINT, 130, "interrupted")]


def test_a_stop_checkpoints_and_resume_loses_no_iteration(tmp_path: Path) -> None:
    """SIGTERM (a cloud's preemption notice) and Ctrl-C pause each trial at its next result,
    which Tune checkpoints: the resumed run starts at the iteration after the last one. The
    Ctrl-C stops the run that resumed after the SIGTERM, and a last resume runs it to the
    end: three runs where a run and its resume per signal took four (CI time)."""
    storage = tmp_path / "results"
    flags = (*SLOW_ITERATIONS, "--stop", "training_iteration=10", "--checkpoint-every", "5")
    finished = 0  # the last iteration a stopped run finished
    for signum, code, ended in STOPS:
        resuming = ("--resume",) if finished else ()
        driver = _start(storage, *flags, *resuming)
        # Three iterations into the first run, two into the resumed one.
        seen = list(_lines_until(driver, finished + 2 if finished else 3))
        sent = time.monotonic()
        driver.send_signal(signum)
        out, err = driver.communicate(timeout=60)
        assert time.monotonic() - sent < 30, "a cloud kills the machine 30 s after SIGTERM"
        assert driver.returncode == code, err
        # The hint repeats the command that started the run (its flags shape the trials),
        # with --resume added where it had none.
        command = ["python", "-m", "rlsuite.run", str(CARTPOLE), *flags, *resuming]
        command += ["--storage-path", str(storage)]
        hint = shlex.join(command if resuming else [*command, "--resume"])
        assert f"{ended}: continue with  {hint}" in err, err
        if signum == signal.SIGINT:
            assert "Ctrl-C: each trial stops at its next result with a checkpoint" in err, err
        if finished:
            assert seen[0] == finished + 1, (finished, seen)  # no finished iteration lost
        finished = max(seen + [int(m) for m in ITERATION_LINE.findall(out)])
    resumed = run_cli(CARTPOLE, *flags, "--resume", storage=storage)
    assert resumed.returncode == 0, resumed.stderr
    first = int(ITERATION_LINE.findall(resumed.stdout)[0])
    assert first == finished + 1, (finished, resumed.stdout)  # no finished iteration lost
    assert _iterations(storage) == list(range(1, 11))


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)  # Python runs the handler between two bytecodes of this thread


@pytest.fixture
def shutdown(monkeypatch: pytest.MonkeyPatch) -> Iterator[Shutdown]:
    """The suite's signal handling installed in this process, as a run's would be; on exit
    the handlers and Tune's setting from before are checked to be back."""
    monkeypatch.setenv("TUNE_DISABLE_SIGINT_HANDLER", "0")  # a user's own setting
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)}
    stop = Shutdown()
    stop.install()
    try:
        assert os.environ["TUNE_DISABLE_SIGINT_HANDLER"] == "1"
        yield stop
    finally:
        stop.uninstall()
    assert {s: signal.getsignal(s) for s in before} == before
    assert os.environ["TUNE_DISABLE_SIGINT_HANDLER"] == "0"
    assert not stop.requested


def test_ctrl_c_pauses_then_interrupts_then_raises(shutdown: Shutdown) -> None:
    """The first Ctrl-C asks the trials to pause (nothing stops yet), the second is Tune's
    interrupt (SIGUSR1: Tune's handler while fit runs, KeyboardInterrupt before it is in
    place), a third raises KeyboardInterrupt."""
    _ctrl_c()
    assert shutdown.requested and not shutdown.terminated
    for _ in range(2):
        with pytest.raises(KeyboardInterrupt):
            _ctrl_c()


def test_a_ctrl_c_after_every_trial_paused_lets_the_run_end(shutdown: Shutdown) -> None:
    """Once every trial paused the suite calls Tune's interrupt itself; a second Ctrl-C
    then (the first line invites one) lets Tune write the trials' state, a third does not."""
    signal.signal(signal.SIGUSR1, lambda *_: None)  # Tune's handler, as while fit runs
    _ctrl_c()
    shutdown.interrupt()  # EndsRunOnceAllPaused: no trial runs any more
    _ctrl_c()  # no KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        _ctrl_c()


def test_through_ray_client_tunes_interrupt_is_a_keyboard_interrupt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through Ray Client Tune's loop runs on the cluster and installs no SIGUSR1 handler
    here: the end of SIGTERM's grace is a KeyboardInterrupt, not SIGUSR1's default (death)."""
    monkeypatch.setattr(shutdown_module, "_through_ray_client", lambda: True)
    # Python's own handlers, as in such a driver: no SIGUSR1 handler, and SIGINT raising
    # KeyboardInterrupt. An earlier in-process Tune run of this test worker leaves Tune's
    # for both (tune.run installs them and never restores the old ones), and with them this
    # test failed in CI, depending on which test files its worker had run.
    usr1 = signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    sigint = signal.signal(signal.SIGINT, signal.default_int_handler)
    before = signal.getsignal(signal.SIGINT)
    stop = Shutdown()
    stop.install()
    try:
        assert signal.getsignal(signal.SIGINT) is before  # Ctrl-C stays Tune's there
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.5)
        assert stop.requested and stop.terminated
        with pytest.raises(KeyboardInterrupt):
            stop.interrupt()
            time.sleep(1)
    finally:
        stop.uninstall()
        signal.signal(signal.SIGUSR1, usr1)
        signal.signal(signal.SIGINT, sigint)


def test_sigterm_to_the_whole_process_group_exits_143_with_the_resume_line(
    tmp_path: Path,
) -> None:
    """`timeout`, `kill -- -PGID` and batch schedulers signal the whole process group, the
    embedded Ray's own processes too: the driver used to wait a minute for its GCS and
    die with exit 1, printing nothing."""
    storage = tmp_path / "results"
    driver = _start(storage, *SLOW_ITERATIONS, "--stop", "training_iteration=30")
    list(_lines_until(driver, 2))
    sent = time.monotonic()
    os.killpg(driver.pid, signal.SIGTERM)  # _start gives the run a process group of its own
    _, err = driver.communicate(timeout=120)
    assert time.monotonic() - sent < 30, "a cloud kills the machine 30 s after SIGTERM"
    assert driver.returncode == 143, err[-2000:]
    (line,) = [line for line in err.splitlines() if "stopped by SIGTERM" in line]
    assert "reached this run's own Ray too" in line and line.endswith("--resume"), line


def test_a_ctrl_c_while_trials_stop_is_one_line_and_exit_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A KeyboardInterrupt out of `fit` (a Ctrl-C while Tune stops the trials): that used
    to end the run with Ray's traceback, exit 1."""

    def ctrl_c_while_stopping(
        *args: object, on_start: Callable[[], None], **kwargs: object
    ) -> None:
        on_start()  # the results folder claimed, Ray about to start
        raise KeyboardInterrupt

    monkeypatch.setattr(rlsuite.run, "run_prepared", ctrl_c_while_stopping)
    handler = signal.getsignal(signal.SIGINT)
    try:
        code = run_main(CARTPOLE, "--smoke", storage=tmp_path / "results")
        assert signal.getsignal(signal.SIGINT) is not handler  # one more ends quietly
    finally:
        signal.signal(signal.SIGINT, handler)
    err = capsys.readouterr().err
    assert code == 130 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("interrupted: the trials stopped") and err.strip().endswith("--resume")


@pytest.mark.parametrize("earlier_run", [False, True])
def test_a_ctrl_c_while_ray_starts_leaves_nothing_to_resume(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    earlier_run: bool,
) -> None:
    """Before Tune wrote the run's state the line said to continue with --resume, which
    then found nothing to resume; the lock and folders stayed, and with --overwrite the
    earlier run stayed at NAME.replaced-TIME without a word."""

    def ctrl_c_in_ray_init(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(api.tuner, "run", ctrl_c_in_ray_init)
    storage = tmp_path / "results"
    earlier = storage / "ppo_cartpole"
    if earlier_run:
        earlier.mkdir(parents=True)
        (earlier / "tuner.pkl").write_bytes(b"the earlier run")
    handler = signal.getsignal(signal.SIGINT)
    try:
        code = run_main(CARTPOLE, "--smoke", "--overwrite", storage=storage)
    finally:
        signal.signal(signal.SIGINT, handler)
    err = capsys.readouterr().err
    assert code == 130 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("interrupted before the first trial started: nothing to resume")
    if earlier_run:  # put back where --resume and evaluate look for it
        assert sorted(p.name for p in storage.iterdir()) == ["ppo_cartpole"]
        assert sorted(p.name for p in earlier.iterdir()) == ["tuner.pkl"]
    else:
        assert not storage.exists()


@pytest.mark.slow  # two runs of 8 one-second iterations; test_sweep_resume kills a driver in CI
def test_killed_driver_resumes_within_one_checkpoint_interval(tmp_path: Path) -> None:
    storage = tmp_path / "results"
    flags = (*SLOW_ITERATIONS, "--stop", "training_iteration=8", "--checkpoint-every", "2")
    driver = _start(storage, *flags)
    seen = list(_lines_until(driver, 5))
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and everything it started
    driver.wait(timeout=30)
    resumed = run_cli(CARTPOLE, *flags, "--resume", storage=storage)
    assert resumed.returncode == 0, resumed.stderr
    first = int(ITERATION_LINE.findall(resumed.stdout)[0])
    assert first >= max(seen) + 1 - 2, (seen, resumed.stdout)


@pytest.mark.slow  # RLlib waits for the dead runner's restart; about a minute
def test_killed_env_runner_is_survived_with_max_failures(tmp_path: Path) -> None:
    storage = tmp_path / "results"
    flags = (
        *SLOW_ITERATIONS,
        "--num-env-runners",
        "1",
        "--max-failures",
        "3",
        "--stop",
        "training_iteration=10",
    )
    driver = _start(storage, *flags)
    list(_lines_until(driver, 4))
    runners = [
        p
        for p in psutil.Process(driver.pid).children(recursive=True)
        if "EnvRunner" in " ".join(p.cmdline())
    ]
    assert runners, "the run's env runner was not found among the driver's processes"
    runners[0].kill()
    out, err = driver.communicate(timeout=300)
    assert driver.returncode == 0, err
    assert max(int(m) for m in ITERATION_LINE.findall(out)) == 10
