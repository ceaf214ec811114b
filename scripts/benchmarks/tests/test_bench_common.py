"""What the benchmarks share: the one result API, child processes with their seconds,
every script's command line (one-line refusals, exit 2) and the list `make bench` prints."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks import catalog
from benchmarks.common import ROOT, SCRIPTS, Result, run_child
from benchmarks.multiagent import MultiAgentBench, TrainingFigures
from benchmarks.overhead import OverheadResult
from benchmarks.pbt import PbtBench
from benchmarks.text import TextBenchResult
from benchmarks.throughput import CaseResult, ThroughputRun
from benchmarks.train import TrainBench

SCRIPT_FILES = sorted(p.name for p in SCRIPTS.glob("bench*.py"))


def test_every_benchmark_result_has_the_one_api() -> None:
    figures = TrainingFigures(1.0, 1, 1.0, 1.0)
    results: list[object] = [
        ThroughputRun([CaseResult("ppo_cartpole", 1, None, "cmd")], {}, {}),
        MultiAgentBench(1, 1.0, figures, figures),
        OverheadResult(1, 1, [1.0], [1.0]),
        PbtBench(1, 1.0, 1.0, {1: 1.0}),
        TextBenchResult("tiny", 16, 8, "CPU", [1.0], [1.0]),
        TrainBench(8, 8, 1, "CPU", [1.0], [1.0]),
    ]
    for result in results:
        assert isinstance(result, Result), type(result).__name__


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
