"""What a run leaves after its trials: the summary line per trial and summary.json (the
progress lines while trials run: test_live_progress.py)."""

from __future__ import annotations

import json
from pathlib import Path

from rlsuite.launcher.progress import TrialSummary, write_summary


def test_a_nan_return_reads_nan_in_the_summary_line_and_null_in_its_file(tmp_path: Path) -> None:
    summary = TrialSummary(
        trial="PPO_0",
        status="OK",
        iterations=3,
        env_steps=384.0,
        episode_return_mean=float("nan"),
        best_episode_return_mean=12.0,
        wall_time_s=1.0,
        checkpoint=None,
        error=None,
    )
    assert "return nan (best 12.0)" in summary.line()
    write_summary(tmp_path / "summary.json", [summary])
    text = (tmp_path / "summary.json").read_text()
    assert "NaN" not in text  # not JSON: other readers would fail on it
    trial = json.loads(text)["trials"][0]
    assert trial["episode_return_mean"] is None and trial["best_episode_return_mean"] == 12.0
