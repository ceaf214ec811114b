"""The actor saturation statistics (rlsuite/multiagent/maddpg/diagnose.py) on actors set
by hand, and scripts/actor_saturation.py on a MADDPG smoke run and on a run it refuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from rlsuite.multiagent.maddpg.diagnose import actor_saturation
from tests.test_maddpg import ACTION_DIM, N_AGENTS, OBS_DIM, _module

ROOT = Path(__file__).resolve().parents[1]


def _constant_actor(module: nn.Module, policy: str, bias: list[float]) -> None:
    """The policy's actor outputs `bias` whatever it sees."""
    actor = module.actors[policy]  # type: ignore[index]
    with torch.no_grad():
        for parameter in actor.parameters():
            parameter.zero_()
        last = [m for m in actor.modules() if isinstance(m, nn.Linear)][-1]
        last.bias.copy_(torch.tensor(bias))


def test_discrete_statistics_tell_a_saturated_actor_from_a_uniform_one() -> None:
    module = _module(discrete=True)
    _constant_actor(module, "hunter", [50.0, 0.0])  # one action, all of the probability
    _constant_actor(module, "prey", [0.0, 0.0])  # uniform over both actions
    stats = actor_saturation(module, torch.randn(64, N_AGENTS, OBS_DIM).numpy())
    assert stats["hunter"] == pytest.approx(
        {
            "share_top_above_0.99": 1.0,
            "mean_top_probability": 1.0,
            "median_top2_logit_gap": 50.0,
            "greedy_actions_used": 1.0,
            "actions": ACTION_DIM,
        }
    )
    assert stats["prey"]["share_top_above_0.99"] == 0.0
    assert stats["prey"]["mean_top_probability"] == pytest.approx(1 / ACTION_DIM)
    assert stats["prey"]["median_top2_logit_gap"] == 0.0


def test_continuous_statistics_count_outputs_beyond_three() -> None:
    module = _module()
    _constant_actor(module, "hunter", [5.0, -4.0])  # both past tanh's bound
    _constant_actor(module, "prey", [5.0, 0.5])  # one of two
    stats = actor_saturation(module, torch.randn(64, N_AGENTS, OBS_DIM).numpy())
    assert stats["hunter"] == pytest.approx({"share_beyond_3": 1.0, "median_abs_output": 4.0})
    assert stats["prey"]["share_beyond_3"] == pytest.approx(0.5)


def _script(*args: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "scripts/actor_saturation.py", *map(str, args)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_script_reports_each_team_of_a_maddpg_run(maddpg_tag_run: Path) -> None:
    done = _script(maddpg_tag_run, "--states", "60", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    stats = json.loads(done.stdout.strip().splitlines()[-1])["policies"]
    assert set(stats) == {"adversary", "agent"}  # by_type's team policies
    for team in stats.values():
        assert 1 <= team["greedy_actions_used"] <= team["actions"] == 5  # simple_tag's moves
        assert 0.2 <= team["mean_top_probability"] <= 1.0
        assert 0.0 <= team["share_top_above_0.99"] <= 1.0


def test_script_refuses_a_run_without_a_team_of_actors_in_one_line(cartpole_run: Path) -> None:
    done = _script(cartpole_run)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("python scripts/actor_saturation.py: error: ")
    assert "not a MADDPG or MASAC run" in lines[0]


def test_script_refuses_zero_states_in_one_line(tmp_path: Path) -> None:
    done = _script(tmp_path, "--states", "0")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--states" in done.stderr
