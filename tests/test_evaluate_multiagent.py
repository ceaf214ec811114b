"""`python -m rlsuite.evaluate` on a multi-agent smoke checkpoint (one shared PPO policy on
MPE simple_spread): returns per policy, per agent and of the team, video, bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rlsuite.evaluate import main as evaluate_main
from rlsuite.evaluation.video import count_frames
from tests.test_evaluate import evaluate

AGENTS = ["agent_0", "agent_1", "agent_2"]


@pytest.fixture
def experiment_dir(spread_run: Path) -> Path:
    """conftest's smoke run (50-step episodes) of the shared-policy spread experiment."""
    return spread_run


def rows(stdout: str) -> dict[str, list[float]]:
    """Table rows of the evaluate output: name -> mean, std, min, max."""
    table = {}
    for line in stdout.splitlines():
        name, *numbers = line.rsplit(maxsplit=4)
        try:
            table[name.strip()] = [float(n) for n in numbers]
        except ValueError:
            continue
    return table


def test_returns_per_policy_agent_and_team_with_video(experiment_dir: Path, tmp_path: Path) -> None:
    video = tmp_path / "spread.mp4"
    done = evaluate(experiment_dir, "--episodes", "3", "--video", video, "--video-episodes", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    table = rows(done.stdout)
    assert {"shared", *AGENTS, "team return", "episode length"} <= set(table), done.stdout
    team = table["team return"]
    # Every agent maps to the one policy: its return is the team's, the agents' sum.
    assert table["shared"][0] == pytest.approx(team[0], abs=0.02)
    assert sum(table[agent][0] for agent in AGENTS) == pytest.approx(team[0], abs=0.05)
    assert team[0] < 0  # spread pays minus the distances to the landmarks
    length = table["episode length"]
    assert length[0] == length[2] == length[3] == 50  # the smoke run's 50-step episodes
    # Two episodes of (reset + one frame per step), read back by decoding the file.
    assert count_frames(video) == 2 * (50 + 1)
    assert f"video {video}: {2 * 51} frames of 2 episode(s)" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env", "mpe/simple_tag"], "evaluate it on the env it was trained on"),
        (["--env", "classic/cartpole"], "is a single-agent env but the checkpoint holds"),
        (["--export", "onnx", "out"], "only single-agent policies export so far"),
    ],
)
def test_bad_input_is_one_line(
    experiment_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    args = [str(tmp_path / a) if a == "out" else a for a in args]
    code = evaluate_main([str(experiment_dir), "--episodes", "1", *args])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1 and message in lines[0], err
    assert not (tmp_path / "out").exists()


def test_checkpoint_without_its_config(
    experiment_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (trial,) = (p for p in experiment_dir.iterdir() if (p / "params.json").exists())
    checkpoint = max(trial.glob("checkpoint_*"))
    copy = tmp_path / checkpoint.name
    shutil.copytree(checkpoint, copy)
    (copy / "class_and_ctor_args.pkl").unlink()  # where RLlib keeps the run's config
    code = evaluate_main([str(copy), "--env", "mpe/simple_spread", "--episodes", "1"])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1
    assert "cannot read the run's config from class_and_ctor_args.pkl" in lines[0]
