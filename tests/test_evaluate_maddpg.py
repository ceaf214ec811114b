"""`python -m rlsuite.evaluate` on a MADDPG smoke checkpoint (MPE simple_tag: three
adversaries and the prey, one policy per team, trained as one RLlib agent): returns per
team, per agent and of the team, and a video; the per-team returns the same run logged
while training; and its checkpoint alone, named its joint env. One smoke run, shared
with test_experiments.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rlsuite import metrics
from rlsuite.evaluation.video import count_frames
from rlsuite.results import lookup, read_results
from tests.helpers import evaluate_in_process
from tests.test_evaluate import evaluate
from tests.test_evaluate_multiagent import rows

ADVERSARIES = ["adversary_0", "adversary_1", "adversary_2"]
PREY = "agent_0"
TEAMS = {"adversary": ADVERSARIES, "agent": [PREY]}  # by_type's policy per agent type
EPISODE_STEPS = 50  # the smoke run's episode limit


@pytest.fixture
def experiment_dir(maddpg_tag_run: Path) -> Path:
    """conftest's shared smoke run of maddpg_tag.py (50-step episodes)."""
    return maddpg_tag_run


def test_returns_per_team_agent_and_team_with_video(experiment_dir: Path, tmp_path: Path) -> None:
    video = tmp_path / "tag.mp4"
    done = evaluate(experiment_dir, "--episodes", "3", "--video", video, "--video-episodes", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    table = rows(done.stdout)
    assert {*TEAMS, *ADVERSARIES, PREY, "team return", "episode length"} <= set(table), done.stdout
    for team, agents in TEAMS.items():  # a team's return is its agents' sum
        assert table[team][0] == pytest.approx(sum(table[a][0] for a in agents), abs=0.05)
    every_agent = sum(table[agent][0] for agent in [*ADVERSARIES, PREY])
    assert table["team return"][0] == pytest.approx(every_agent, abs=0.05)
    # simple_tag pays each adversary +10 for every tag by any of them and charges the prey
    # for tags and for leaving the arena: rewards that went to the wrong agents show here.
    assert table["adversary_0"] == table["adversary_1"] == table["adversary_2"]
    assert table["adversary_0"][2] >= 0 >= table[PREY][3]  # lowest hunter, highest prey
    length = table["episode length"]
    assert length[0] == length[2] == length[3] == EPISODE_STEPS
    # Two episodes of (reset + one frame per step), read back by decoding the file.
    assert count_frames(video) == 2 * (EPISODE_STEPS + 1)
    assert f"video {video}: {2 * (EPISODE_STEPS + 1)} frames of 2 episode(s)" in done.stdout


def test_training_logged_returns_per_team_and_agent(experiment_dir: Path) -> None:
    (trial,) = (p for p in experiment_dir.iterdir() if (p / "params.json").exists())
    last = read_results(trial / "result.json")[-1]
    agents = {a: lookup(last, metrics.agent_return_mean(a)) for a in [*ADVERSARIES, PREY]}
    teams = {team: lookup(last, metrics.policy_return_mean(team)) for team in TEAMS}
    assert None not in [*agents.values(), *teams.values()], last.get("env_runners")
    # Means over the same episodes: a team's is its agents' sum, the teams' the team return.
    for team, members in TEAMS.items():
        assert teams[team] == pytest.approx(sum(agents[a] for a in members), abs=1e-4)
    team_return = lookup(last, metrics.TEAM_RETURN_MEAN)
    assert sum(teams.values()) == pytest.approx(team_return, rel=1e-4, abs=1e-3)


@pytest.fixture
def bare_checkpoint(experiment_dir: Path, tmp_path: Path) -> Path:
    """The run's last checkpoint copied away from its results (no params.json beside it)."""
    (trial,) = json.loads((experiment_dir / "summary.json").read_text())["trials"]
    return Path(shutil.copytree(trial["checkpoint"], tmp_path / "checkpoint"))


def test_a_bare_checkpoint_plays_its_joint_env_by_name(bare_checkpoint: Path) -> None:
    done = evaluate(bare_checkpoint, "--env", "joint/mpe/simple_tag", "--episodes", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    table = rows(done.stdout)
    assert {*TEAMS, *ADVERSARIES, PREY, "team return"} <= set(table), done.stdout


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            "mpe/simple_tag",
            "trained as one agent on its joint env; pass --env joint/mpe/simple_tag",
        ),
        ("joint/mpe/nope", "--env joint/mpe/nope: unknown env 'mpe/nope'"),
        ("classic/cartpole", "evaluate it on the env it was trained on"),
    ],
)
def test_a_bare_checkpoint_on_another_env_is_one_line(
    bare_checkpoint: Path, env: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = evaluate_in_process(capsys, bare_checkpoint, "--env", env, "--episodes", "1")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err, err
