"""`python -m rlsuite.report` on real smoke results of two seeds: PNGs, IQM table, bad
input, damaged and foreign results directories."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rlsuite import metrics
from rlsuite.report import main as report_main
from rlsuite.reporting import markdown, runs, stats
from tests.helpers import ROOT

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def report(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rlsuite.report", *map(str, args)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


@pytest.fixture
def results(cartpole_seeds_run: Path) -> Path:
    """conftest's smoke PPO CartPole run over seeds 0 and 1 (one results directory, two
    trials, named `ppo`), read only."""
    return cartpole_seeds_run


def test_report_renders_figures_and_iqm_table(results: Path, tmp_path: Path) -> None:
    other = tmp_path / "ppo_copy"  # a second config to compare (same data, another name)
    shutil.copytree(results, other)
    output = tmp_path / "report"
    output.mkdir()
    (output / "pbt_earlier.png").write_bytes(PNG_SIGNATURE)  # an earlier report's figure
    done = report(results, other, "--output", output)
    assert done.returncode == 0, done.stderr[-2000:]
    # The printed line names this report's figures only.
    assert done.stdout.strip().endswith("report.md (learning_curves.png, final_scores.png)")
    for name in ("learning_curves.png", "final_scores.png"):
        data = (output / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000  # a drawn figure, not a stub
    text = (output / "report.md").read_text()
    assert "![learning curves](learning_curves.png)" in text
    rows = [line for line in text.splitlines() if line.startswith(("| ppo |", "| ppo_copy |"))]
    assert len(rows) == 2
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[1] == "classic/cartpole" and cells[2] == "2"  # env, seeds
    iqm, (low, high) = float(cells[3]), map(float, re.findall(r"-?[\d.]+", cells[4]))
    assert 1 <= low <= iqm <= high <= 50  # smoke episodes end by 50 steps
    seeds = re.findall(r"^\| PPO_\w+ \| (\d) \|", text, flags=re.MULTILINE)
    assert sorted(seeds) == ["0", "0", "1", "1"]  # each trial is one seed (two configs)
    assert "per policy" not in text and not list(output.glob("policies_*"))  # one policy


def test_report_shows_each_teams_return(maddpg_tag_run: Path, tmp_path: Path) -> None:
    """maddpg_tag's smoke: one policy per team; each team's final return is the mean of
    the last iterations (up to five) that logged it, read here from progress.csv."""
    output = tmp_path / "report"
    assert report_main([str(maddpg_tag_run), "--output", str(output)]) == 0
    figure = (output / "policies_maddpg_tag.png").read_bytes()
    assert figure.startswith(PNG_SIGNATURE) and len(figure) > 10_000
    text = (output / "report.md").read_text()
    assert "### maddpg_tag: per policy" in text
    (trial_dir,) = [p for p in maddpg_tag_run.iterdir() if (p / "progress.csv").is_file()]
    progress = pd.read_csv(trial_dir / "progress.csv")
    for team in ("adversary", "agent"):
        column = progress[metrics.policy_return_mean(team)].dropna()
        assert len(column), team
        row = next(line for line in text.splitlines() if line.startswith(f"| {team} |"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[1] == "1"  # seeds
        assert float(cells[4]) == pytest.approx(column.iloc[-5:].mean(), rel=1e-3)  # mean


def test_iqm_and_bootstrap_match_rliable_definitions() -> None:
    scores = np.arange(1.0, 9.0)  # 1..8: the middle half is 3, 4, 5, 6
    assert stats.iqm(scores) == pytest.approx(4.5)
    low, high = stats.stratified_bootstrap_ci(scores)
    assert low < 4.5 < high
    assert stats.stratified_bootstrap_ci(np.full(5, 3.0)) == (3.0, 3.0)


def test_final_score_over_the_last_env_steps_evens_out_iteration_sizes() -> None:
    """Two configs compared at 50k env steps: iterations of 1,000 steps and of 3,200. The
    last 5 iterations span 5,000 steps of one and 16,000 of the other; a window of the
    last 5,000 env steps spans about as many steps of each."""

    def trial(step: int, returns: list[float]) -> runs.Trial:
        results = [
            {
                metrics.ENV_STEPS_SAMPLED_LIFETIME: step * (i + 1),
                "env_runners": {"episode_return_mean": value},
            }
            for i, value in enumerate(returns)
        ]
        return runs.Trial("t", {}, results)

    metric = metrics.EPISODE_RETURN_MEAN
    small = trial(1000, [-80.0] * 45 + [-60.0] * 5)  # 50k steps, better over the last 5k
    large = trial(3200, [-80.0] * 11 + [-70.0] * 3 + [-60.0] * 2)  # 51.2k steps
    last_5k = runs.FinalWindow(env_steps=5000)
    assert small.final_score(metric) == small.final_score(metric, last_5k) == -60.0
    assert large.final_score(metric) == pytest.approx(-66.0)  # 16k steps: 3 x -70, 2 x -60
    assert large.final_score(metric, last_5k) == -60.0  # iterations ending at 48k and 51.2k
    huge = runs.FinalWindow(env_steps=10)  # narrower than one iteration: the last one
    assert large.final_score(metric, huge) == -60.0
    assert "last 5,000 env steps" in last_5k.describe()


@pytest.mark.parametrize(("mode", "best"), [("min", "2"), ("max", "9")])
def test_a_trials_best_follows_the_mode(tmp_path: Path, mode: str, best: str) -> None:
    """The report's per-trial "best": the lowest value where lower is better."""
    values = [5.0, 2.0, 9.0, 4.0]
    results = [
        {metrics.ENV_STEPS_SAMPLED_LIFETIME: 100 * i, "loss": v} for i, v in enumerate(values)
    ]
    config = runs.Config("c", tmp_path, "loss", [runs.Trial("t", {}, results)], mode=mode)
    page, _ = markdown.write([config], tmp_path / "report")
    (row,) = [line for line in page.read_text().splitlines() if line.startswith("| t |")]
    assert row.split(" | ")[3] == best  # trial, seed, final, best


@pytest.mark.parametrize(
    ("value", "message"), [("0", "must be more than 0"), ("nan", "expected a finite number")]
)
def test_final_env_steps_must_be_positive(
    capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        report_main(["results/any", "--final-env-steps", value])
    err = capsys.readouterr().err.strip().splitlines()
    assert exited.value.code == 2 and len(err) == 1, err
    assert f"--final-env-steps: {message}" in err[0]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp, res: tmp / "missing", "no such directory"),
        (lambda tmp, res: tmp, "no trial results here"),
        (lambda tmp, res: [res, res], "is given twice"),
        (lambda tmp, res: [res, shutil.copytree(res, tmp / "copy" / res.name)], "same name"),
    ],
)
def test_bad_input_is_one_line(
    results: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path, Path], Path | list[Path]],
    message: str,
) -> None:
    """In this process for speed; test_report_renders_figures_and_iqm_table runs a real one."""
    paths = make(tmp_path, results)
    paths = paths if isinstance(paths, list) else [paths]
    code = report_main([*map(str, paths), "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing written


def test_json_files_that_are_not_text_read_as_missing(results: Path, tmp_path: Path) -> None:
    """The summary and a trial's params.json cut to bytes that are no UTF-8 (found: a
    UnicodeDecodeError traceback from report, evaluate and serve): the report is written
    from the result lines, as without those files; a folder name that is not UTF-8 shows
    its odd bytes as U+FFFD (matplotlib's traceback before)."""
    copy = tmp_path / "ppo"
    shutil.copytree(results, copy)
    for damaged in (copy / "summary.json", next(copy.glob("PPO_*/params.json"))):
        damaged.write_bytes(b"\xff\xfe\x00junk")
    latin1 = copy.rename(tmp_path / os.fsdecode(b"caf\xe9"))  # a name that is not UTF-8 either
    assert report_main([str(latin1), "--output", str(tmp_path / "out")]) == 0
    assert "caf\ufffd" in (tmp_path / "out" / "report.md").read_text()


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def damage_result_json(results: Path) -> None:
    next(results.glob("PPO_*/result.json")).write_bytes(bytes(range(128, 256)))


def foreign_results(results: Path) -> None:
    """Tune results of another tool: no metric of rlsuite's, lines that are not objects."""
    for result_json in results.glob("PPO_*/result.json"):
        result_json.write_text('{"training_iteration": 1, "loss": 0.3}\n[1, 2]\n')


def damage_numbers(results: Path) -> None:
    """A return past float's range and a line nested past Python's recursion limit: an
    OverflowError and a RecursionError before."""
    huge = '{"training_iteration": 1, "env_runners": {"episode_return_mean": 1%s}}' % ("0" * 400)
    deep = "[" * 200_000 + "]" * 200_000
    for result_json in results.glob("PPO_*/result.json"):
        result_json.write_text(f"{huge}\n{deep}\n")


def damage_pbt_log(results: Path) -> None:
    (results / "pbt_global.txt").write_bytes(b"\xff\xfe" + bytes(range(256)))


@pytest.mark.parametrize(
    ("change", "output", "message"),
    [
        (damage_result_json, "report", "result.json is damaged (not text)"),
        (foreign_results, "report", "no trial reports env_runners/episode_return_mean"),
        (damage_numbers, "report", "no trial reports env_runners/episode_return_mean"),
        (damage_pbt_log, "report", "pbt_global.txt is damaged (not text)"),
        (None, "a_file", "it is a file, not a directory"),
        (None, "/proc/report", "--output /proc/report: /proc is not writable"),
    ],
)
def test_damaged_or_foreign_input_is_one_line(
    results: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[Path], None] | None,
    output: str,
    message: str,
) -> None:
    """In this process: exit 2, one line, nothing written and no file changed."""
    copy = tmp_path / "ppo"
    shutil.copytree(results, copy)
    (tmp_path / "a_file").write_text("not a directory")
    if change is not None:
        change(copy)
    before = files(tmp_path)
    code = report_main([str(copy), "--output", str(tmp_path / output)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1 and message in lines[0], err
    assert files(tmp_path) == before
