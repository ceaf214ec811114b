"""`python -m rlsuite.evaluate` on a real smoke checkpoint: returns, video, bad input, the
same table piped and on a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlsuite.evaluation.video import count_frames
from tests.helpers import ROOT, evaluate_in_process
from tests.terminal import run_on_a_terminal


def evaluate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rlsuite.evaluate", *map(str, args)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


@pytest.fixture
def experiment_dir(cartpole_run: Path) -> Path:
    """conftest's smoke PPO CartPole run (50-step episodes, two checkpoints), read only."""
    return cartpole_run


def test_single_agent_returns_and_video(experiment_dir: Path, tmp_path: Path) -> None:
    video = tmp_path / "out.mp4"
    done = evaluate(experiment_dir, "--episodes", "3", "--video", video, "--video-episodes", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((experiment_dir / "summary.json").read_text())
    assert f"checkpoint {summary['trials'][0]['checkpoint']}" in done.stdout  # the latest one
    row = next(line for line in done.stdout.splitlines() if line.startswith("default_policy"))
    mean, _std, low, high = map(float, row.split()[1:])
    assert 1 <= low <= mean <= high <= 50  # CartPole pays 1 per step; smoke caps episodes at 50
    lengths = next(line for line in done.stdout.splitlines() if line.startswith("episode length"))
    assert float(lengths.split()[2]) == pytest.approx(mean, abs=0.05)  # return = length here
    # Two episodes of (reset + one frame per step); read back by decoding the file.
    frames = int(done.stdout.split("video ")[1].split(": ")[1].split()[0])
    assert count_frames(video) == frames
    assert 2 * (low + 1) <= frames <= 2 * (high + 1)


def test_greedy_evaluation_is_repeatable_piped_and_on_a_terminal(experiment_dir: Path) -> None:
    """One seed, the same table twice: piped, and on a pseudo-terminal, where evaluate
    prints the same plain lines (no live view, no colour codes)."""
    flags = ("--episodes", "2", "--seed", "7")
    piped = evaluate(experiment_dir, *flags)
    assert piped.returncode == 0, piped.stderr[-2000:]
    command = [sys.executable, "-m", "rlsuite.evaluate", str(experiment_dir), *flags]
    output, status = run_on_a_terminal(command, timeout=120)
    text = output.decode()
    assert os.waitstatus_to_exitcode(status) == 0, text[-3000:]
    assert "return mean" in text and "\x1b" not in text, text[-500:]
    piped_table, terminal_table = (
        [line for line in printed.splitlines() if line.startswith("default_policy")]
        for printed in (piped.stdout, text)
    )
    assert piped_table and piped_table == terminal_table


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "classic/pendulum"], "evaluate it on the env it was trained on"),
        (["--env", "classic/cartpol"], "did you mean classic/cartpole"),
        (["--trial", "nope"], "--trial nope"),
        (["--video", "out.gif"], "must end in .mp4"),
        (["--export", "tflite", "x"], "unknown format"),
        (["--episodes", "-1"], "must be 0 or more"),
        (["--data-path", "data"], "--data-path does not apply to this checkpoint"),
    ],
)
def test_bad_input_is_one_line(
    experiment_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """In this process for speed; test_directory_without_checkpoints runs a real one."""
    code, err = evaluate_in_process(capsys, experiment_dir, *args)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.fixture
def trial_without_checkpoints(experiment_dir: Path, tmp_path: Path) -> Path:
    """A trial folder in `tmp_path` with the shared run's params.json and nothing else."""
    trial = tmp_path / "PPO_0000"
    trial.mkdir()
    (trial / "params.json").write_text(
        (next(experiment_dir.glob("PPO_*")) / "params.json").read_text()
    )
    return trial


def test_directory_without_checkpoints(
    trial_without_checkpoints: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trial = trial_without_checkpoints
    cases = [
        (tmp_path / "empty", "no such directory"),
        (tmp_path, "no trial has checkpoints"),
        (trial, "this trial has no checkpoints"),
    ]
    # One through a real process (no traceback reaches the terminal), the rest through
    # `main` here: each process took ~5 s of CI.
    done = evaluate(cases[0][0])
    assert done.returncode == 2 and cases[0][1] in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    for path, message in cases[1:]:
        code, err = evaluate_in_process(capsys, path)
        assert code == 2 and message in err, err
        assert len(err.strip().splitlines()) == 1


def test_a_run_whose_trial_failed_before_its_first_checkpoint_says_why(
    trial_without_checkpoints: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trial = trial_without_checkpoints
    traceback = '  File "/home/me/my_env.py", line 9, in reset\nOSError: my reset broke\n'
    (trial / "error.txt").write_text(f"Failure # 1\n{traceback}")
    code, err = evaluate_in_process(capsys, tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert (
        "PPO_0000 failed before its first (OSError: my reset broke (at /home/me/my_env.py:9)" in err
    )
    assert str(trial / "error.txt") in err


@pytest.mark.parametrize(
    ("where", "args", "message"),
    [
        ("trial", ["--trial", "00000"], "is a trial already"),
        ("checkpoint", ["--trial", "00000"], "is a checkpoint already"),
        ("experiment", ["--checkpoint", "{checkpoint}"], "give a checkpoint's name"),
        ("experiment", ["--trial", ""], "no single trial of that name"),
    ],
)
def test_a_choice_that_cannot_apply_is_refused_not_ignored(
    experiment_dir: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    args: list[str],
    message: str,
) -> None:
    """--trial with one trial or checkpoint given, or a --checkpoint path (which could
    reach into another run), would evaluate something other than what was asked for."""
    trial = next(experiment_dir.glob("PPO_*"))
    checkpoint = max(trial.glob("checkpoint_*"))
    path = {"experiment": experiment_dir, "trial": trial, "checkpoint": checkpoint}[where]
    args = [a.format(checkpoint=checkpoint) for a in args]
    code, err = evaluate_in_process(capsys, path, *args)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
