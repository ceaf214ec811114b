"""`rlsuite.launch` from a thread other than the main one (a web backend, a GUI): it runs
(signal handling is the main thread's, so it is left out, as Tune does) and the process
ends without Ray 2.60's 60 s of "Failed to connect to GCS" at exit."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import rlsuite
from rlsuite.errors import UsageError
from rlsuite.launcher import api
from rlsuite.launcher.prepare import load_and_prepare
from rlsuite.options import RunOptions
from tests.helpers import ROOT, run_script

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"

SCRIPT = """
import sys, threading
import rlsuite

runs = []
thread = threading.Thread(
    target=lambda: runs.append(rlsuite.launch(sys.argv[1], smoke=True, storage_path=sys.argv[2], quiet=True))
)
thread.start()
thread.join()
print(runs[0].summaries[0].line())
"""


def test_launch_from_a_thread_runs_and_the_process_ends(tmp_path: Path) -> None:
    done = run_script(SCRIPT, ROOT / "experiments" / "ppo_cartpole.py", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert " OK: return " in done.stdout, done.stdout
    assert "Failed to connect to GCS" not in done.stderr, done.stderr[-2000:]


class _EndedBeforeRay(Exception):
    """Ends a run from its `on_start`, once its folder is claimed and before Ray starts."""


def _end_before_ray() -> None:
    raise _EndedBeforeRay


def test_a_second_launch_while_one_runs_is_refused(tmp_path: Path) -> None:
    """Two runs at once in one process broke each other: the first to end shut Ray down
    under the second, and fd 1 and 2 went back to the wrong copy. No Ray starts here."""
    options = {"smoke": True, "storage_path": str(tmp_path / "first"), "verbose": True}
    prepared = load_and_prepare(CARTPOLE, RunOptions.from_launch(None, None, options))
    going, release = threading.Event(), threading.Event()
    ended: list[BaseException] = []

    def hold_then_end() -> None:
        going.set()
        release.wait(60)
        _end_before_ray()

    def first_run() -> None:
        try:
            api.run_prepared(prepared, on_start=hold_then_end)
        except _EndedBeforeRay as error:
            ended.append(error)

    first = threading.Thread(target=first_run)
    first.start()
    try:
        assert going.wait(60)
        with pytest.raises(UsageError, match=r"another rlsuite\.launch is still running"):
            rlsuite.launch(CARTPOLE, smoke=True, storage_path=str(tmp_path / "second"))
    finally:
        release.set()
        first.join(60)
    assert len(ended) == 1
    assert not (tmp_path / "second").exists()  # refused before it wrote anything
    with pytest.raises(_EndedBeforeRay):  # once the first ended, the next one goes
        api.run_prepared(prepared, on_start=_end_before_ray)
