"""What a run prints, piped (stdout and stderr together): the suite's lines only, Ray's in
the run's logs/ unless `--verbose`; `--quiet` prints only the summary. Where conftest's
shared runs were made with the flag under test, the test reads what they printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import ROOT, printed_file, run_cli

# What Ray's own lines start with or carry: a worker prefix, a log level, C++ log lines.
RAY_LINE = re.compile(r"\(pid=|\(raylet\)|\bINFO\b|\bWARNING\b|core_worker|\bE\d{4} |Traceback")


def _lines(printed: str) -> list[str]:
    return [line for line in printed.splitlines() if line.strip()]


def _output(path: Path, tmp_path: Path, *flags: str) -> list[str]:
    run = run_cli(path, "--smoke", *flags, storage=tmp_path / "results")
    assert run.returncode == 0, run.stderr
    return _lines(run.stdout + run.stderr)


@pytest.mark.parametrize(
    ("experiment", "most"),
    [
        ("ppo_cartpole", 6),  # conftest's cartpole_run: a smoke run that other tests read too
        pytest.param("resnet_cifar10", 10, marks=pytest.mark.slow),  # a minute: 2 Train runs
        pytest.param("pbt_ppo_cartpole", 12, marks=pytest.mark.slow),
    ],
)
def test_smoke_prints_only_the_suites_lines(
    tmp_path: Path, experiment: str, most: int, request: pytest.FixtureRequest
) -> None:
    if experiment == "ppo_cartpole":
        experiment_dir: Path = request.getfixturevalue("cartpole_run")
        lines = _lines(printed_file(experiment_dir).read_text())
    else:
        lines = _output(ROOT / "experiments" / f"{experiment}.py", tmp_path)
        experiment_dir = tmp_path / "results" / experiment
    ray_lines = [line for line in lines if RAY_LINE.search(line)]
    assert not ray_lines, ray_lines
    assert len(lines) <= most, lines
    assert lines[0].startswith("logs: ")
    log = experiment_dir / "logs" / "driver.log"
    assert "Started a local Ray instance" in log.read_text()  # Ray's lines went here
    assert (experiment_dir / "logs" / "ray").is_dir()  # workers' logs


def test_verbose_shows_rays_lines(maddpg_tag_run: Path) -> None:
    """conftest's maddpg_tag run, made with `--verbose`."""
    lines = _lines(printed_file(maddpg_tag_run).read_text())
    assert any("Started a local Ray instance" in line for line in lines), lines
    assert any(" OK: return " in line for line in lines)


def test_quiet_prints_only_the_summary(cartpole_seeds_run: Path) -> None:
    """conftest's run of two CartPole seeds, made with `--quiet`: a summary line each."""
    lines = _lines(printed_file(cartpole_seeds_run).read_text())
    assert not any(" iter " in line for line in lines), lines
    assert sum(" OK: return " in line for line in lines) == 2, lines
    assert lines[-1].startswith("results: ")
