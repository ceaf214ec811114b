"""The launcher-overhead benchmark: its ratio, and the phases read from the marks that
each side prints."""

from __future__ import annotations

import json
import subprocess
import sys

from benchmarks.overhead import (
    BETWEEN,
    ROWS,
    TRAINING,
    Mark,
    OverheadResult,
    parse_marks,
    phases,
)
from benchmarks.overhead_programs import _MARK_FUNCTION, HAND_WRITTEN, MARK, SUITE

BEFORE, AFTER = {"cpus": 2, "load_average_1m": 0.4}, {"cpus": 2, "load_average_1m": 2.1}


def _result(rlsuite_s: list[float], rllib_s: list[float]) -> OverheadResult:
    return OverheadResult(20, len(rlsuite_s), rlsuite_s, rllib_s, BEFORE, AFTER)


def test_overhead_ratio_is_of_medians() -> None:
    result = _result(rlsuite_s=[11, 10, 12.5], rllib_s=[10, 9, 8])  # means 11.17 and 9
    assert result.ratio == 11 / 9
    assert "1.222" in result.report()


def test_rounds_40_percent_apart_give_no_ratio_and_the_report_says_why() -> None:
    result = _result(rlsuite_s=[10, 14, 10], rllib_s=[10, 10.5, 9.5])
    assert result.ratio is None
    report = result.report()
    assert "3 rounds (medians, spread min-max)" in report
    assert "python -m rlsuite.run         10.0 s  (10.0-14.0)" in report
    assert "ratio rlsuite / RLlib      rounds differ >25%  (goal <= 1.05)" in report
    assert "load average before 0.4, after 2.1 on 2 CPUs" in report
    figures = json.loads(json.dumps(result.to_json()))
    assert figures["ratio"] is None and figures["noisy"]
    assert figures["spread"]["rlsuite_s"] == [10, 14]
    assert figures["machine_after"]["load_average_1m"] == 2.1


def test_rounds_within_10_percent_print_the_ratio_and_both_spreads() -> None:
    result = _result(rlsuite_s=[10.5, 10.0, 11.0], rllib_s=[10.0, 9.5, 10.2])
    report = result.report()
    assert "hand-written RLlib script     10.0 s  (9.5-10.2)" in report
    assert "python -m rlsuite.run         10.5 s  (10.0-11.0)" in report
    assert "ratio rlsuite / RLlib        1.050" in report and "differ" not in report
    figures = json.loads(json.dumps(result.to_json()))
    assert figures["ratio"] == 1.05 and not figures["noisy"]


def _suite_marks() -> list[Mark]:
    """rlsuite.run's marks: started at 100.0, two iterations of 1.5 s each."""
    return [
        Mark("imported", 103.0),
        Mark("ray_init_start", 104.0),
        Mark("ray_init_end", 107.0),
        Mark("fit_start", 107.5),
        Mark("iteration", 111.5, 1.5),  # began at 110.0
        Mark("iteration", 113.5, 1.5),  # 0.5 s after the first: a checkpoint, Tune's handling
        Mark("stopped", 114.5),
        Mark("summary_done", 114.75),
    ]


def test_phases_add_up_to_the_wall_time_and_split_the_iterations() -> None:
    seconds = phases(_suite_marks(), started_at=100.0, ended_at=116.0)
    assert list(seconds) == list(ROWS)
    assert seconds["interpreter, imports"] == 3.0
    assert seconds["ray.init"] == 3.0
    assert seconds["Tuner set-up"] == 0.5
    assert seconds["algorithm start"] == 2.5
    assert seconds[TRAINING] == 3.0 and seconds[BETWEEN] == 0.5
    assert seconds["after the last iteration"] == 1.0
    assert seconds["shutdown, exit"] == 1.25
    assert sum(seconds.values()) == 16.0


def test_a_side_without_a_phase_gives_its_time_to_the_next() -> None:
    marks = [m for m in _suite_marks() if m.name not in ("fit_start", "summary_done")]
    seconds = phases(marks, started_at=100.0, ended_at=116.0)
    assert "Tuner set-up" not in seconds and "summary" not in seconds
    assert seconds["algorithm start"] == 3.0
    assert seconds["shutdown, exit"] == 1.5
    assert sum(seconds.values()) == 16.0


def test_marks_are_read_from_the_output_between_other_lines() -> None:
    stdout = (
        f"{MARK} imported 1700000000.25 \n"
        "[abc] iter    1  env steps 4000  return 20.0\n"
        f"{MARK} iteration 1700000003.5 1.75\n"
    )
    assert parse_marks(stdout) == [
        Mark("imported", 1700000000.25),
        Mark("iteration", 1700000003.5, 1.75),
    ]


def test_both_programs_print_every_mark_that_ends_their_phases() -> None:
    for name in ("imported", "ray_init_start", "ray_init_end", "iteration", "stopped"):
        assert f'mark("{name}"' in HAND_WRITTEN
    for name in ("imported", "iteration", "summary_done"):
        assert f'mark("{name}"' in SUITE
    assert '"ray_init_start", "ray_init_end"' in SUITE and '"fit_start", "stopped"' in SUITE


def test_report_shows_where_the_time_goes_on_each_side() -> None:
    suite = phases(_suite_marks(), started_at=100.0, ended_at=116.0)
    rllib = {**suite, "interpreter, imports": 2.0}
    del rllib["Tuner set-up"], rllib["summary"]
    result = OverheadResult(
        iterations=2,
        rounds=1,
        rlsuite_s=[16.0],
        rllib_s=[14.0],
        machine_before=BEFORE,
        machine_after=AFTER,
        rlsuite_phases=[suite],
        rllib_phases=[rllib],
    )
    report = result.report()
    assert "1 round: no spread" in report and "(16.0" not in report  # no min-max of one
    assert "where the time goes" in report
    interpreter = next(line for line in report.splitlines() if "interpreter, imports" in line)
    assert interpreter.split()[-3:] == ["2.0", "3.0", "+1.0"]
    tuner = next(line for line in report.splitlines() if line.strip().startswith("Tuner set-up"))
    assert tuner.split()[-2:] == ["-", "0.5"]
    figures = json.loads(json.dumps(result.to_json()))
    assert figures["phase_medians"]["rlsuite"]["Tuner set-up"] == 0.5
    assert figures["ratio"] == 16.0 / 14.0


def test_marks_reach_the_parent_while_fd_1_points_at_a_log(tmp_path) -> None:
    """rlsuite.run sends fd 1 to its driver.log while a run goes (its marks went there,
    and every phase but the summary came out empty)."""
    log = tmp_path / "driver.log"
    program = _MARK_FUNCTION + (
        f"os.dup2(os.open({str(log)!r}, os.O_WRONLY | os.O_CREAT), 1)\n"
        'print("a Ray line", flush=True)\n'
        'mark("ray_init_end")\n'
    )
    child = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert [m.name for m in parse_marks(child.stdout)] == ["ray_init_end"]
    assert log.read_text() == "a Ray line\n"
