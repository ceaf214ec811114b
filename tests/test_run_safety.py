"""No run lost to another run or to a signal: a second run into the same folder is refused
(the first run's files byte for byte unchanged), and so is one into the folder of a run
still going, `--overwrite` keeps the old run aside
(checked on test_live_terminal.py's run), damaged Tune state and changed settings are named
on `--resume`, SIGTERM and Ctrl-C checkpoint and exit 143 and 130, a killed driver resumes
within one checkpoint interval, a killed env runner is survived."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from ray import tune

import rlsuite.run
from rlsuite.errors import UsageError
from rlsuite.launcher import shutdown as shutdown_module
from rlsuite.launcher.resume_checks import check_same_config
from rlsuite.launcher.run_dirs import LOCK_FILE
from rlsuite.launcher.shutdown import Shutdown
from tests.helpers import ROOT, digest, run_cli, run_main

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"
RUN = "cartpole"  # conftest's cartpole_run
SAME_RUN = ("--smoke", "--name", RUN, "--seed", "0")  # the flags it was made with
# Iterations of at least this long, so that a signal lands between two known iterations.
SLOW_ITERATIONS = ("--smoke", "--set", "reporting.min_time_s_per_iteration=1.0")
ITERATION_LINE = re.compile(r"\] iter\s+(\d+)")


@pytest.fixture
def finished_run(cartpole_run: Path, tmp_path: Path) -> Path:
    """A results folder holding a copy of conftest's smoke CartPole run (`--name cartpole
    --seed 0`, shared by the session and read only): these tests change what they get."""
    storage = tmp_path / "finished"
    shutil.copytree(cartpole_run, storage / RUN)
    return storage


def test_second_run_is_refused_and_the_first_is_untouched(
    finished_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = digest(finished_run)
    code = run_main(CARTPOLE, *SAME_RUN, storage=finished_run)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert "already holds a run" in lines[0] and "--resume" in lines[0]
    assert "--overwrite" in lines[0] and "--name" in lines[0]
    assert digest(finished_run) == before


@contextlib.contextmanager
def _run_still_going(experiment_dir: Path) -> Iterator[None]:
    """What a run holds from before its Ray starts to its end (run_dirs.claimed)."""
    experiment_dir.mkdir(parents=True, exist_ok=True)
    with (experiment_dir / LOCK_FILE).open("w") as lock:
        lock.write("4242\n")
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.mark.parametrize(
    "flags", [(), ("--overwrite",), ("--resume",)], ids=["new", "overwrite", "resume"]
)
def test_a_run_still_going_keeps_its_folder(
    finished_run: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]
) -> None:
    """Started at the same moment as another into one folder, before either wrote Tune's
    files (`new`: an empty folder), or `--overwrite`/`--resume` of a run not yet ended:
    one line, exit 2, nothing moved or written."""
    if not flags:
        shutil.rmtree(finished_run / RUN)
    with _run_still_going(finished_run / RUN):
        before = digest(finished_run)
        code = run_main(CARTPOLE, *SAME_RUN, *flags, storage=finished_run)
        assert digest(finished_run) == before
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert "is in use by a run still going (pid 4242)" in lines[0] and "--name" in lines[0]


OTHER_SETTINGS = "the run was started with another "


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (
            ("--stop", "training_iteration=5"),
            f"{OTHER_SETTINGS}stop (training_iteration=2 there, training_iteration=5 now)",
        ),
        (("--checkpoint-every", "3"), f"{OTHER_SETTINGS}checkpoints (--checkpoint-every"),
        (("--max-failures", "2"), f"{OTHER_SETTINGS}--max-failures (0 there, 2 now)"),
        (("--set", "training.gamma=0.5"), "the experiment now sets gamma (0.99 there, 0.5 now)"),
    ],
    ids=["stop", "checkpoint-every", "max-failures", "config"],
)
def test_resume_with_other_run_settings_is_one_line(
    finished_run: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], named: str
) -> None:
    """Tune restores a run with its own stop, checkpoints and restarts (Tuner.restore takes
    no RunConfig) and each trial with the config it started with: another one given with
    --resume (a flag, a --set, an edited experiment file) would be dropped without a word."""
    before = digest(finished_run)
    code = run_main(CARTPOLE, *SAME_RUN, *flags, "--resume", storage=finished_run)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert named in lines[0] and "--overwrite" in lines[0], lines[0]
    assert digest(finished_run) == before


def test_resume_compares_the_constant_config_values_only(tmp_path: Path) -> None:
    """Searched and perturbed keys differ from trial to trial, a function's repr and a
    set's order from process to process, an absolute data path with the directory the
    command ran in: none is a change. A changed constant is, and an added or removed
    entry of a dict (env_config), NaN equals NaN."""
    trial = tmp_path / "PPO_0"
    trial.mkdir()
    saved = {
        "lr": 0.1,
        "gamma": 0.99,
        "fn": "<function f at 0x7f01>",
        "train": "{'b', 'a'}",  # Tune's str() of a set
        "data_path": "/home/a/data/sst2",
        "clip": float("nan"),
        "env_config": {"n": 3, "k": 0},
    }
    (trial / "params.json").write_text(json.dumps(saved))
    space = {
        "lr": tune.uniform(0, 1),
        "gamma": 0.99,
        "fn": lambda: 0,
        "train": {"a", "b"},
        "data_path": "/mnt/b/data/sst2",
        "clip": float("nan"),
        "env_config": {"n": 3, "k": 0},
    }
    check_same_config(tmp_path, {**space, "lr": 0.5}, varied=["lr"])
    check_same_config(tmp_path, space, varied=[])  # a search domain is no constant
    grid = {"env_config": {"n": tune.grid_search([3, 4]), "k": 0}}  # Tune wrote the value it drew
    check_same_config(tmp_path, {**space, **grid}, varied=["lr"])
    for changed, named in (
        ({"env_config": {"n": 4, "k": 0}}, r"env_config/n \(3 there, 4 now\)"),
        ({"env_config": {"n": 3, "k": 0, "m": 1}}, r"env_config/m \(absent there, 1 now\)"),
        ({"env_config": {"k": 0}}, r"env_config/n \(3 there, absent now\)"),
        ({"data_path": "/mnt/b/data/mnli"}, r"data_path"),
    ):
        with pytest.raises(UsageError, match=named):
            check_same_config(tmp_path, {**space, **changed}, varied=["lr"])


@pytest.mark.parametrize("damaged", ["tuner.pkl", "experiment_state"])
def test_damaged_tune_state_is_named_on_resume(
    finished_run: Path, capsys: pytest.CaptureFixture[str], damaged: str
) -> None:
    storage = finished_run
    run_dir = storage / RUN
    target = (
        run_dir / "tuner.pkl"
        if damaged == "tuner.pkl"
        else next(run_dir.glob("experiment_state-*.json"))
    )
    target.write_bytes(target.read_bytes()[: len(target.read_bytes()) // 2])
    before = digest(storage)
    code = run_main(CARTPOLE, *SAME_RUN, "--resume", storage=storage)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert target.name in lines[0] and "damaged" in lines[0] and "--overwrite" in lines[0]
    assert digest(storage) == before


def test_resume_without_the_latest_checkpoint_is_one_line(
    finished_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trial to continue whose latest checkpoint folder was deleted (to free disk): Tune
    restores from that one only, and failed the trial after Ray started."""
    run_dir = finished_run / RUN
    state_file = max(run_dir.glob("experiment_state-*.json"), key=lambda p: p.stat().st_mtime)
    state = json.loads(state_file.read_text())
    trial_state = state["trial_data"][0][0]
    assert '"status": "TERMINATED"' in trial_state
    state["trial_data"][0][0] = trial_state.replace('"TERMINATED"', '"PAUSED"')  # paused by Ctrl-C
    state_file.write_text(json.dumps(state))
    (trial,) = json.loads((run_dir / "summary.json").read_text())["trials"]
    latest = run_dir / trial["trial"] / Path(trial["checkpoint"]).name  # in this copy
    shutil.rmtree(latest)
    before = digest(finished_run)
    code = run_main(CARTPOLE, *SAME_RUN, "--resume", storage=finished_run)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert f"latest checkpoint {latest} is gone" in lines[0], lines[0]
    assert "--overwrite" in lines[0]
    assert digest(finished_run) == before


# --overwrite keeps the old run aside: test_live_terminal.py's run (one run for both, CI time).


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
    import json

    result = next((storage / "ppo_cartpole").glob("PPO_*/result.json"))
    return [json.loads(line)["training_iteration"] for line in result.read_text().splitlines()]


@pytest.mark.parametrize(
    ("signum", "code", "ended"),
    [(signal.SIGTERM, 143, "stopped by SIGTERM"), (signal.SIGINT, 130, "interrupted")],
    ids=["sigterm", "ctrl-c"],
)
def test_a_stop_checkpoints_and_resume_loses_no_iteration(
    tmp_path: Path, signum: int, code: int, ended: str
) -> None:
    """SIGTERM (a cloud's preemption notice) and Ctrl-C pause each trial at its next result,
    which Tune checkpoints: the resumed run starts at the iteration after the last one."""
    storage = tmp_path / "results"
    flags = (*SLOW_ITERATIONS, "--stop", "training_iteration=7", "--checkpoint-every", "5")
    driver = _start(storage, *flags)
    seen = list(_lines_until(driver, 3))
    sent = time.monotonic()
    driver.send_signal(signum)
    out, err = driver.communicate(timeout=60)
    assert time.monotonic() - sent < 30, "a cloud kills the machine 30 s after SIGTERM"
    assert driver.returncode == code, err
    # The hint repeats the command that started the run: its flags shape the trials.
    hint = shlex.join(
        ["python", "-m", "rlsuite.run", str(CARTPOLE), *flags, "--storage-path", str(storage)]
    )
    assert f"{ended}: continue with  {hint} --resume" in err, err
    if signum == signal.SIGINT:
        assert "Ctrl-C: each trial stops at its next result with a checkpoint" in err, err
    finished = max(seen + [int(m) for m in ITERATION_LINE.findall(out)])
    resumed = run_cli(CARTPOLE, *flags, "--resume", storage=storage)
    assert resumed.returncode == 0, resumed.stderr
    first = int(ITERATION_LINE.findall(resumed.stdout)[0])
    assert first == finished + 1, (finished, resumed.stdout)  # no finished iteration lost
    assert _iterations(storage) == list(range(1, 8))


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


def test_resume_with_other_trial_shaping_flags_is_one_line(finished_run: Path) -> None:
    before = digest(finished_run)
    resumed = run_cli(CARTPOLE, *SAME_RUN, "--seeds", "2", "--resume", storage=finished_run)
    assert resumed.returncode == 2, resumed.stderr[-2000:]
    error = resumed.stderr.strip().splitlines()[-1]
    assert error.startswith("rlsuite.run: error: --resume ") and "other flags" in error
    assert "Traceback" not in resumed.stderr
    # Only logs/ changes, the refused attempt's own Ray logs, kept for whoever looks, and
    # the pid in the lock it held.
    assert _without_logs(digest(finished_run)) == _without_logs(before)


def _without_logs(digest: dict[str, str]) -> dict[str, str]:
    mine = (f"{RUN}/logs/", f"{RUN}/{LOCK_FILE}")
    return {path: sha for path, sha in digest.items() if not path.startswith(mine)}
