"""`rlsuite.launch` from a thread other than the main one (a web backend, a GUI): it runs
(signal handling is the main thread's, so it is left out, as Tune does) and the process
ends without Ray 2.60's 60 s of "Failed to connect to GCS" at exit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

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
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            str(ROOT / "experiments" / "ppo_cartpole.py"),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert " OK: return " in done.stdout, done.stdout
    assert "Failed to connect to GCS" not in done.stderr, done.stderr[-2000:]
