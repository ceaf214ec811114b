"""No run lost to another run: a second run into the same folder is refused (the first
run's files byte for byte unchanged), and so is one into the folder of a run still going;
`--overwrite` keeps the old run aside (checked on test_live_terminal.py's run).
`--resume`'s refusals: test_resume_refusals.py; SIGTERM, Ctrl-C and killed processes:
test_stop_signals.py."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlsuite.launcher.run_dirs import LOCK_FILE
from tests.helpers import CARTPOLE_RUN as RUN
from tests.helpers import CARTPOLE_RUN_FLAGS as SAME_RUN
from tests.helpers import ROOT, digest, run_main

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"


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


# --overwrite keeps the old run aside: test_live_terminal.py's run (one run for both, CI time).
