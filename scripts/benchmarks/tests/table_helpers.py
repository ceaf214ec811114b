"""What the benchmark-table tests share: a fabricated measurement, a row's cells on the
page, and the script run as a user runs it."""

from __future__ import annotations

import subprocess
import sys

from benchmarks.common import ROOT, scripts_on_path
from benchmarks.table_records import Measurement, Scores

MACHINE = {"cpus": 2, "cpu_model": "AMD EPYC", "processor": "x86_64", "gpus": []}
VERSIONS = {"python": "3.11.9", "ray": "2.60.0", "torch": "2.15.0"}


def measurement(
    scores: list[float], stop: list[str], command: str = "python -m rlsuite.run x"
) -> Measurement:
    return Measurement(
        command=command,
        stop=stop,
        metric="env_runners/episode_return_mean",
        window="last 5 iterations",
        seeds=list(range(len(scores))),
        scores=scores,
        steps=[64_000.0] * len(scores),
        steps_unit="env steps",
        throughput=1234.5,
        throughput_unit="env steps/s",
        train_s=[30.0] * len(scores),
        wall_s=95.0,
        figure="benchmarks/ppo_cartpole.png",
        machine=MACHINE,
        versions=VERSIONS,
        date="2026-11-24",
        summary=Scores.of(scores),
    )


def table_line(page: str, name: str, table: int = 0) -> list[str]:
    """A row's cells in the page's main table (0) or in the gate's (1)."""
    lines = [line for line in page.splitlines() if line.startswith(f"| `{name}` |")]
    return [cell.strip() for cell in lines[table].strip("|").split(" | ")]


def run_script(*args: str) -> tuple[int, list[str], bool]:
    """The script as a user runs it: exit code, stderr lines, whether Ray was imported."""
    program = (
        "import runpy, sys\n"
        f"sys.argv = ['scripts/benchmark.py', *{list(args)!r}]\n"
        "try:\n"
        "    runpy.run_path('scripts/benchmark.py', run_name='__main__')\n"
        "except SystemExit as end:\n"
        "    print('ray' in sys.modules, end.code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=scripts_on_path(),
    )
    imported_ray, code = done.stdout.split()[-2:]
    return int(code), done.stderr.strip().splitlines(), imported_ray == "True"
