"""What the benchmarks share: the one result API, child processes with their seconds,
every script's command line (one-line refusals, exit 2) and the list `make bench` prints."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks import catalog
from benchmarks.common import (
    ROOT,
    SCRIPTS,
    WITHHELD,
    Result,
    disagrees,
    ratio_of_medians,
    rounds_title,
    run_child,
    spread,
    spread_note,
    spread_text,
)
from benchmarks.multiagent import MultiAgentBench
from benchmarks.overhead import OverheadResult
from benchmarks.pbt import PbtBench
from benchmarks.text import TextBenchResult
from benchmarks.throughput import CaseResult, ThroughputRun
from benchmarks.train import TrainBench

SCRIPT_FILES = sorted(p.name for p in SCRIPTS.glob("bench*.py"))


def test_every_benchmark_result_has_the_one_api() -> None:
    results: list[object] = [
        ThroughputRun([CaseResult("ppo_cartpole", 1, None, "cmd")], {}, {}),
        MultiAgentBench(1, [], {}, {}),
        OverheadResult(1, 1, [1.0], [1.0], {}, {}),
        PbtBench(1, 1.0, 1.0, {1: 1.0}, {}, {}),
        TextBenchResult("tiny", 16, 8, "CPU", [1.0], [1.0], {}, {}),
        TrainBench(8, 8, 1, "CPU", [1.0], [1.0], {}, {}),
    ]
    for result in results:
        assert isinstance(result, Result), type(result).__name__


def test_rounds_disagree_beyond_a_quarter_of_their_median() -> None:
    assert spread([3.0, 1.0, 2.0]) == (1.0, 3.0)
    assert not disagrees([80, 100, 105])  # (105 - 80) / 100 = 0.25 exactly: still agrees
    assert disagrees([80, 100, 105.1])
    assert disagrees([500, 700, 500]) and not disagrees([480, 500, 520])
    assert disagrees([-100, -120, -90])  # returns can be negative: |median|
    assert not disagrees([100]) and not disagrees([])  # one round has nothing to differ from
    assert disagrees([0, 0, 1]) and not disagrees([0, 0])
    assert spread_text([9.0, 12.3, 11.8], "{:.1f}".format) == "9.0-12.3"
    assert spread_text([-310, -300], "{:g}".format) == "-310 to -300"
    assert spread_text([5.0], "{:g}".format) == "-" and spread_text(None, str) == "-"


def test_a_ratio_of_medians_is_withheld_where_either_sides_rounds_disagree() -> None:
    assert ratio_of_medians([10, 11, 12], [5, 5, 5.5]) == 11 / 5
    assert ratio_of_medians([10, 14, 10], [5, 5, 5]) is None  # 40% apart
    assert ratio_of_medians([10, 10], [5, 7, 5]) is None
    assert ratio_of_medians([10], [4]) == 2.5  # one round each: nothing to disagree
    assert WITHHELD == "rounds differ >25%"
    assert rounds_title(3) == "3 rounds (medians, spread min-max)"
    assert rounds_title(1) == "1 round: no spread"
    assert spread_note([1.0, 2.0], "{:.1f}".format) == "  (1.0-2.0)"
    assert spread_note([1.0], "{:.1f}".format) == ""


def test_a_child_is_timed_and_its_output_kept() -> None:
    child = run_child([sys.executable, "-c", "print('hello')"], meter_cpu=True)
    assert child.stdout == "hello\n" and child.wall_s > 0
    assert child.ended_at > child.started_at
    assert child.cpu_s is None or child.cpu_s >= 0


def test_a_failing_child_raises_with_the_end_of_its_output() -> None:
    program = "import sys; print('working'); sys.exit('no such env: atari/pongg')"
    with pytest.raises(RuntimeError, match=r"failed \(exit 1\):\nworking\nno such env"):
        run_child([sys.executable, "-c", program])


@pytest.mark.parametrize(
    ("script", "flag"),
    [
        ("bench.py", "--rounds=0"),
        ("bench_multiagent.py", "--env-steps=-5"),
        ("bench_overhead.py", "--iterations=two"),
        ("bench_pbt.py", "--runners=0"),
        ("bench_text.py", "--seq-length=0"),
        ("bench_train.py", "--images=1.5"),
        ("overlap_learning.py", "--seeds=0"),
    ],
)
def test_every_script_refuses_a_bad_count_in_one_line(script: str, flag: str) -> None:
    done = subprocess.run(
        [sys.executable, f"scripts/{script}", flag], cwd=ROOT, capture_output=True, text=True
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"python scripts/{script}: error: argument {flag.split('=')[0]}")


def test_make_bench_lists_every_script_with_its_command() -> None:
    entries = catalog.entries()
    assert [e.command.split()[1] for e in entries] == [f"scripts/{s}" for s in SCRIPT_FILES]
    assert all(e.measures and "--json" in e.command for e in entries)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks"], cwd=SCRIPTS, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.count("python scripts/bench") == len(entries)
