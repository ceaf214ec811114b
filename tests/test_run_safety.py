"""No run lost to another run: a second run into the same folder is refused (the first
run's files byte for byte unchanged), and so is one into the folder of a run still going;
`--overwrite` keeps the old run aside (checked on test_live_terminal.py's run), a run
without the suite's lock file too, and puts it back when the new run is refused. Names
the file system cannot take are one line. `--resume`'s refusals: test_resume_refusals.py;
SIGTERM, Ctrl-C and killed processes: test_stop_signals.py."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rlsuite.errors import UsageError
from rlsuite.launcher import run_dirs
from rlsuite.launcher.api import run_prepared
from rlsuite.launcher.prepare import load_and_prepare
from rlsuite.launcher.run_dirs import LOCK_FILE
from rlsuite.options import RunOptions
from rlsuite.outputs import check_output_dir, check_output_file
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


def _old_run(experiment_dir: Path) -> Path:
    """A run without the suite's lock file: a plain Tune run, an older rlsuite run, a copy
    made without dotfiles."""
    (experiment_dir / "PPO_old").mkdir(parents=True)
    (experiment_dir / "PPO_old" / "result.json").write_text("{}\n")
    (experiment_dir / "summary.json").write_text('{"old": true}\n')
    return experiment_dir


def test_overwrite_moves_aside_a_run_without_a_lock_file(tmp_path: Path) -> None:
    old = _old_run(tmp_path / "ppo_cartpole")
    before = digest(old)
    with run_dirs.claimed(old, overwrite=True):
        assert os.listdir(old) == [LOCK_FILE]  # the new run starts in an empty folder
    (aside,) = tmp_path.glob("ppo_cartpole.replaced-*")
    assert digest(aside) == before


def test_overwrite_then_refused_leaves_the_old_run_where_it_was(tmp_path: Path) -> None:
    """A refusal after the folder is claimed (cluster.check_resources once Ray joined a
    cluster): bad input loses nothing, and `--resume` still finds the run by its name."""
    storage = tmp_path / "results"
    old = _old_run(storage / "ppo_cartpole")
    (old / LOCK_FILE).write_text("4242\n")  # a run of the suite's that ended
    before = digest(storage)
    options = RunOptions(smoke=True, overwrite=True, storage_path=str(storage))
    prepared = load_and_prepare(CARTPOLE, options)

    def refused() -> None:
        raise UsageError("one trial needs 64 CPUs but the cluster has 8")

    with pytest.raises(UsageError, match=r"^one trial needs 64 CPUs but the cluster has 8$"):
        run_prepared(prepared, on_start=refused)
    assert digest(storage) == before  # no NAME.replaced-TIME beside it either


def test_overwrite_then_refused_after_writing_says_where_the_old_run_is(tmp_path: Path) -> None:
    """Files the refused run wrote (its logs, once Ray was up) are not deleted to make
    room: the old run stays aside, and the line names the folder."""
    old = _old_run(tmp_path / "ppo_cartpole")
    moved = r"refused; the run --overwrite moved aside is at "
    with pytest.raises(UsageError, match=moved), run_dirs.claimed(old, overwrite=True):
        (old / "logs").mkdir()
        raise UsageError("refused")
    (aside,) = tmp_path.glob("ppo_cartpole.replaced-*")
    assert (aside / "summary.json").read_text() == '{"old": true}\n'


LONG = "a" * 300


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--name", LONG), "--name aaaaaaaaaaaaaaaaaaaa...: 300 bytes long"),
        (("--storage-path", f"{{tmp}}/{LONG}/x"), "is 300 bytes long"),
        (("--storage-path", f"{{tmp}}/missing/{LONG}"), "is 300 bytes long"),
    ],
    ids=["name", "storage-path", "storage-path-below-a-missing-folder"],
)
def test_a_name_too_long_for_the_file_system_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, str], named: str
) -> None:
    """Found before Ray starts, not as an OSError where the folder is made or moved
    aside. A missing folder above a long name hides it from the OS (ENOENT first)."""
    flag, value = flags
    storage = tmp_path / "results"
    if flag == "--storage-path":
        storage = Path(value.format(tmp=tmp_path))
        code = run_main(CARTPOLE, "--smoke", storage=storage)
    else:
        code = run_main(CARTPOLE, "--smoke", flag, value, storage=storage)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert named in lines[0] and f"{flag} " in lines[0], lines[0]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("check", [check_output_dir, check_output_file])
def test_output_paths_too_long_are_refused(
    tmp_path: Path, check: Callable[[Path, str], None]
) -> None:
    """`rlsuite.evaluate --video/--export`, `rlsuite.report --output`, `serve --logs-dir`."""
    for path in (tmp_path / LONG / "out", tmp_path / "missing" / LONG):
        with pytest.raises(UsageError, match=r"^--out .*: the name a{20}\.\.\. is 300 bytes long"):
            check(path, "--out")
    with pytest.raises(UsageError, match="longer than the 4096 bytes a path may have"):
        check(tmp_path.joinpath(*["b"] * 2100), "--out")
