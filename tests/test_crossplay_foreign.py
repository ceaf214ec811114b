"""`rlsuite.evaluate MADDPG_RUN --policy adversary=PPO_RUN`: another algorithm's policy acting
inside a MADDPG team (rlsuite/evaluation/foreign_actor.py). The PPO run is conftest's
MADDPG simple_tag checkpoint with its modules replaced by a PPO MultiRLModule for the same
teams, saved where a PPO run's checkpoint keeps them; the swap shows in the actions."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite.errors import UsageError
from rlsuite.evaluation.crossplay import PolicySwap, apply_swaps
from rlsuite.evaluation.foreign_actor import module_as_actor
from rlsuite.evaluation.locate import MODULES_DIR, locate
from rlsuite.evaluation.rl import restore_policy
from rlsuite.multiagent.maddpg.joint_env import OBS
from rlsuite.multiagent.policies import agent_spaces
from tests.helpers import evaluate_in_process
from tests.test_crossplay import plays_with_swap

TAG = "mpe/simple_tag"


def ppo_checkpoint(maddpg_tag_run: Path, tmp_path: Path, **overrides: gym.Space) -> Path:
    """A checkpoint holding PPO modules "adversary" and "agent" for simple_tag's teams,
    with `overrides` (`adversary_obs=...`, `adversary_actions=...`) in place of the env's
    spaces."""
    copy = tmp_path / "ppo_checkpoint"
    shutil.copytree(locate(maddpg_tag_run).checkpoint, copy)
    shutil.rmtree(copy / MODULES_DIR)
    spaces = agent_spaces(TAG)
    specs = {}
    for team, agent in (("adversary", "adversary_0"), ("agent", "agent_0")):
        specs[team] = RLModuleSpec(
            module_class=DefaultPPOTorchRLModule,
            observation_space=overrides.get(f"{team}_obs", spaces[agent].observation),
            action_space=overrides.get(f"{team}_actions", spaces[agent].action),
            model_config={"fcnet_hiddens": [16]},
        )
    MultiRLModuleSpec(rl_module_specs=specs).build().save_to_path(copy / MODULES_DIR)
    return copy


def test_ppo_hunters_act_inside_the_maddpg_team(maddpg_tag_run: Path, tmp_path: Path) -> None:
    other = ppo_checkpoint(maddpg_tag_run, tmp_path)
    policy: Any = restore_policy(locate(maddpg_tag_run).checkpoint)
    team = policy.module
    rows = torch.randn(32, team.n_agents, team.obs_dim)
    rows[:, -1, 14:] = 0.0  # the prey sees 14 numbers, zero-padded to the hunters' 16

    def actions() -> torch.Tensor:
        with torch.no_grad():
            return team.forward_inference({Columns.OBS: {OBS: rows}})[Columns.ACTIONS]

    before = actions()
    (line,) = apply_swaps(policy, (PolicySwap("adversary", other),))
    assert line == f"policy adversary from {other}"
    after = actions()
    hunters = [i for i, p in enumerate(team.agent_policies) if p == "adversary"]
    ppo = team.actors["adversary"].module
    with torch.no_grad():
        logits = ppo.forward_inference({Columns.OBS: rows[:, hunters].reshape(-1, 16)})
    expected = logits[Columns.ACTION_DIST_INPUTS].argmax(-1).reshape(32, len(hunters))
    assert torch.equal(after[:, hunters], expected)
    assert not torch.equal(after[:, hunters], before[:, hunters])  # not the MADDPG hunters'
    prey = [i for i, p in enumerate(team.agent_policies) if p == "agent"]
    assert torch.equal(after[:, prey], before[:, prey])  # the prey stays the MADDPG run's


def test_cli_plays_ppo_prey_against_maddpg_hunters(
    maddpg_tag_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The prey's 14 observations are cut from the team's padded rows."""
    plays_with_swap(capsys, maddpg_tag_run, "agent", ppo_checkpoint(maddpg_tag_run, tmp_path))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"adversary_actions": gym.spaces.Discrete(4)}, "takes 16 observations and 4 actions"),
        ({"adversary_obs": gym.spaces.Box(-1, 1, (20,))}, "this team's agents at most 16 and 5"),
        ({"adversary_actions": gym.spaces.Box(-1, 1, (5,))}, "this team acts in discrete actions"),
    ],
)
def test_a_policy_that_does_not_fit_the_team_is_one_line(
    maddpg_tag_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    overrides: dict[str, gym.Space],
    message: str,
) -> None:
    other = ppo_checkpoint(maddpg_tag_run, tmp_path, **overrides)
    code, err = evaluate_in_process(capsys, maddpg_tag_run, "--policy", f"adversary={other}")
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_continuous_team_takes_only_its_own_kind() -> None:
    team = SimpleNamespace(discrete=False, obs_dim=24, actor_output_dim=lambda: 4)
    module = DefaultPPOTorchRLModule(
        observation_space=gym.spaces.Box(-1, 1, (24,)),
        action_space=gym.spaces.Discrete(4),
        model_config={"fcnet_hiddens": [8]},
    )
    with pytest.raises(UsageError, match=r"continuous actions .* swap between runs of the same"):
        module_as_actor("walker", team, module, Path("other"))


def test_a_team_swapped_into_a_multi_agent_run_names_the_way_round(
    spread_run: Path, maddpg_tag_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (policy_id,) = restore_policy(locate(spread_run).checkpoint).module.keys()  # type: ignore[attr-defined]
    flag = f"{policy_id}={maddpg_tag_run}"
    code, err = evaluate_in_process(capsys, spread_run, "--policy", flag)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "is a team trained as one agent" in err, err
    assert f"rlsuite.evaluate OTHER_RUN --policy {policy_id}=THIS_RUN" in err, err


def test_a_module_without_action_logits_is_one_line() -> None:
    """DQN's module acts from Q values: refused by module_as_actor's probe, before play."""
    from ray.rllib.algorithms.dqn.torch.default_dqn_torch_rl_module import (
        DefaultDQNTorchRLModule,
    )

    team = SimpleNamespace(discrete=True, obs_dim=16, actor_output_dim=lambda: 5)
    config = {"fcnet_hiddens": [8], "double_q": True, "dueling": False, "num_atoms": 1}
    config |= {"v_min": -10.0, "v_max": 10.0, "epsilon": [(0, 1.0)]}
    module = DefaultDQNTorchRLModule(
        observation_space=gym.spaces.Box(-1, 1, (16,)),
        action_space=gym.spaces.Discrete(5),
        model_config=config,
        inference_only=False,
    )
    with pytest.raises(UsageError, match="gives no action_dist_inputs of 5 logits"):
        module_as_actor("adversary", team, module, Path("other"))
