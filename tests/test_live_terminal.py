"""The live view on a real pseudo-terminal: a short run shows a moving bar with ETA and ends
with the plain summary lines (tests/test_live_progress.py feeds the view results directly;
`rlsuite.evaluate` on a terminal is test_evaluate.py's).
The run replaces a finished one with `--overwrite` too (test_run_safety.py's other checks)."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from tests.helpers import digest
from tests.terminal import ANSI, run_on_a_terminal


def test_a_run_on_a_terminal_shows_a_bar_and_ends_with_the_plain_summary(
    cartpole_run: Path, tmp_path: Path
) -> None:
    """The run also replaces a finished run of the same name with `--overwrite`, which
    keeps the old one aside byte for byte (one run for both, CI time)."""
    shutil.copytree(cartpole_run, tmp_path / "cartpole")
    before = digest(tmp_path / "cartpole")
    command = [
        sys.executable,
        *("-m", "rlsuite.run", "experiments/ppo_cartpole.py", "--smoke"),
        *("--storage-path", str(tmp_path), "--stop", "training_iteration=4"),
        *("--name", "cartpole", "--overwrite"),
    ]
    output, status = run_on_a_terminal(command, timeout=120)
    text = ANSI.sub(b"", output).decode()
    assert os.waitstatus_to_exitcode(status) == 0, text[-3000:]
    (aside,) = tmp_path.glob("cartpole.replaced-*")
    assert digest(aside) == before
    assert (tmp_path / "cartpole" / "summary.json").exists()
    assert "ETA" in text and "/4 iter" in text and "elapsed" in text
    assert "━" in text
    _, view_end, summary = output.rpartition(b"\x1b[?25h")  # the view ends: cursor shown
    assert view_end
    # Plain lines after it, and no colour reset at exit (Ray's colorama: rlsuite.flags.exit_with).
    lines = [line for line in summary.split(b"\r\n") if line.strip()]
    assert not [line for line in lines if b"\x1b" in line], lines
    plain = [line.decode() for line in lines]
    assert re.match(r"PPO_\w+ OK: return ", plain[0]), plain
    assert plain[-1].startswith("results: ")
