"""scripts/overlap_learning.py's report, on runs given by hand (no training)."""

from __future__ import annotations

import runpy

from benchmarks.common import SCRIPTS


def test_the_report_gives_each_sides_median_and_every_seed() -> None:
    script = runpy.run_path(str(SCRIPTS / "overlap_learning.py"))
    result = script["Result"](
        {"overlapped": [20_000.0, None, 14_000.0], "ppo": [10_000.0]}, 400_000
    )
    report = result.report()
    assert "overlapped  median 17,000 (20,000, not reached, 14,000)" in report
    assert "ppo         median 10,000 (10,000)" in report
    assert result.to_json()["runs"]["overlapped"][1] is None
