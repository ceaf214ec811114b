"""The benchmark table's regression gate (`scripts/benchmark.py --check`): its verdicts, its
exit codes, and the rows it cannot gate. No test here trains: the fresh runs are fabricated."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import benchmark
from benchmarks import table_run
from benchmarks.table import BY_NAME, fast_rows
from benchmarks.table_records import CheckOutcome, Measurement, Records, missing_checks
from benchmarks.tests.table_helpers import measurement, run_script

CARTPOLE_CHECK = list(BY_NAME["ppo_cartpole"].check_stop)  # a record must be at the row's stop


def test_the_check_passes_inside_the_recorded_interval_and_fails_outside() -> None:
    recorded = measurement([10.0, 15.0, 20.0], ["env_steps=64000"])
    low, high = recorded.summary.ci
    assert 10.0 <= low < high <= 20.0
    inside = CheckOutcome("ppo_cartpole", (low + high) / 2, recorded)
    assert inside.passed and inside.line().startswith("PASS ppo_cartpole: IQM")
    for iqm, side in [(low - 1, "below"), (high + 1, "above"), (math.nan, "no final score")]:
        outcome = CheckOutcome("ppo_cartpole", iqm, recorded)
        assert not outcome.passed and outcome.line().startswith("FAIL") and side in outcome.line()


def test_the_gate_exits_1_when_a_fresh_run_falls_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "benchmarks.md"
    recorded = measurement([10.0, 15.0, 20.0], CARTPOLE_CHECK)
    Records({}, {"ppo_cartpole": recorded}).save(output.with_suffix(".json"))
    for scores, code in [([14.0, 15.0, 16.0], 0), ([30.0, 31.0, 32.0], 1)]:
        fresh = measurement(scores, CARTPOLE_CHECK)
        monkeypatch.setattr(table_run, "measure", lambda row, seeds, fresh=fresh, **_: fresh)
        assert (
            benchmark.main(["--check", "--only", "ppo_cartpole", "--output", str(output)]) == code
        )


def test_a_check_without_a_usable_record_names_the_command_that_records_it() -> None:
    stale = measurement([10.0, 15.0, 20.0], ["env_steps=50000"])
    line = missing_checks(
        [("mappo_spread", ("env_steps=64000",))], Records({}, {"mappo_spread": stale})
    )
    assert line is not None and "recorded at env_steps=50000" in line
    assert line.endswith("python scripts/benchmark.py --only mappo_spread --record-check")
    both = missing_checks([("a", ("env_steps=1",)), ("b", ("env_steps=1",))], Records({}, {}))
    assert both is not None and "--only a --only b --record-check" in both


def test_check_without_records_is_one_line_naming_the_record_command(tmp_path: Path) -> None:
    code, lines, imported_ray = run_script("--check", "--output", str(tmp_path / "b.md"))
    assert code == 2 and len(lines) == 1 and not imported_ray, lines
    assert "have no usable recorded check run" in lines[0] and "--record-check" in lines[0]


def test_the_gate_checks_the_recorded_rows_and_names_the_unrecorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --only, fast rows with no record are named (with the command that records
    them) and the recorded ones are gated; with --only naming an unrecorded row, exit 2."""
    output = tmp_path / "benchmarks.md"
    recorded = measurement([10.0, 15.0, 20.0], CARTPOLE_CHECK)
    Records({}, {"ppo_cartpole": recorded}).save(output.with_suffix(".json"))
    checked = []

    def fake_measure(row: object, seeds: int, **_: object) -> Measurement:
        checked.append(row.name)
        return measurement([14.0, 15.0, 16.0], CARTPOLE_CHECK)

    monkeypatch.setattr(table_run, "measure", fake_measure)
    assert benchmark.main(["--check", "--output", str(output)]) == 0
    assert checked == ["ppo_cartpole"]
    out = capsys.readouterr().out.splitlines()
    ungated = [line for line in out if line.startswith("not gated: ")]
    assert len(ungated) == len(fast_rows()) - 1, out
    assert any(
        "sac_pendulum has no recorded check run" in line
        and "--only sac_pendulum --record-check" in line
        for line in ungated
    )
    assert any(line.startswith("PASS ppo_cartpole") for line in out)
    assert benchmark.main(["--check", "--only", "sac_pendulum", "--output", str(output)]) == 2
