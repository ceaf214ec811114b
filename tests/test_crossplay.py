"""`rlsuite.evaluate RUN --policy ID=OTHER`: one policy's weights from another run, for a
team trained as one agent (MADDPG) and a multi-agent run (shared-policy PPO). The other
run is a copy of conftest's shared smoke run with that policy's weights changed, so the
swap shows in the weights played and in the actions. Across algorithms (tests/
test_crossplay_foreign.py), a PPO policy plays inside the MADDPG team."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite.errors import UsageError
from rlsuite.evaluate import main as evaluate_main
from rlsuite.evaluation.crossplay import PolicySwap, apply_swaps
from rlsuite.evaluation.locate import MODULES_DIR, locate
from rlsuite.evaluation.policy import load_module
from rlsuite.evaluation.rl import restore_policy
from tests.helpers import evaluate_in_process


def changed_copy(run: Path, tmp_path: Path, module_id: str, edit: Any) -> Path:
    """A copy of `run`'s checkpoint whose module `module_id` went through `edit`."""
    copy = tmp_path / "other_checkpoint"
    shutil.copytree(locate(run).checkpoint, copy)
    module = load_module(copy, module_id)
    with torch.no_grad():
        edit(module)
    module.save_to_path(copy / MODULES_DIR / module_id)
    return copy


def test_team_member_policy_comes_from_the_other_run(maddpg_tag_run: Path, tmp_path: Path) -> None:
    def double_adversary(team: Any) -> None:
        for weight in team.actors["adversary"].parameters():
            weight.mul_(2.0)

    other = changed_copy(maddpg_tag_run, tmp_path, DEFAULT_MODULE_ID, double_adversary)
    policy: Any = restore_policy(locate(maddpg_tag_run).checkpoint)
    before = {p: _weights(policy.module.actors[p]) for p in ("adversary", "agent")}
    (line,) = apply_swaps(policy, (PolicySwap("adversary", other),))
    assert line == f"policy adversary from {other}"
    for doubled, kept in zip(
        _weights(policy.module.actors["adversary"]), before["adversary"], strict=True
    ):
        torch.testing.assert_close(doubled, 2.0 * kept)
    for now, kept in zip(_weights(policy.module.actors["agent"]), before["agent"], strict=True):
        torch.testing.assert_close(now, kept)  # the prey stays this run's


def test_multi_agent_policy_comes_from_the_other_run(spread_run: Path, tmp_path: Path) -> None:
    checkpoint = locate(spread_run).checkpoint
    policy: Any = restore_policy(checkpoint)
    (policy_id,) = policy.module.keys()

    def zero(module: Any) -> None:
        for weight in module.parameters():
            weight.zero_()

    other = changed_copy(spread_run, tmp_path, policy_id, zero)
    apply_swaps(policy, (PolicySwap(policy_id, other),))
    assert all(not w.any() for w in _weights(policy.module[policy_id]))


def test_cli_prints_where_the_policy_came_from(
    maddpg_tag_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = changed_copy(maddpg_tag_run, tmp_path, DEFAULT_MODULE_ID, lambda team: None)
    plays_with_swap(capsys, maddpg_tag_run, "adversary", other)


def plays_with_swap(
    capsys: pytest.CaptureFixture[str], run: Path, policy_id: str, other: Path
) -> None:
    """`rlsuite.evaluate run --policy policy_id=other` plays an episode and says so."""
    code = evaluate_main([str(run), "--policy", f"{policy_id}={other}", "--episodes", "1"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert printed.out.splitlines()[1] == f"policy {policy_id} from {other}"


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("adversary", "expected ID=PATH"),
        ("hunter=SAME", "has no policy 'hunter' (it has adversary, agent)"),
        ("adversary=SPREAD", "has no policy 'adversary' (it has"),
        ("adversary=CARTPOLE", "is a single-agent run; swap in a team"),
        (
            "adversary=/nonexistent",
            "--policy adversary=/nonexistent: /nonexistent: no such directory",
        ),
    ],
)
def test_bad_swaps_are_one_line(
    maddpg_tag_run: Path,
    spread_run: Path,
    cartpole_run: Path,
    capsys: pytest.CaptureFixture[str],
    flag: str,
    message: str,
) -> None:
    runs = {"SAME": maddpg_tag_run, "SPREAD": spread_run, "CARTPOLE": cartpole_run}
    for name, run in runs.items():
        flag = flag.replace(name, str(run))
    code, err = evaluate_in_process(capsys, maddpg_tag_run, "--policy", flag)
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_policy_named_twice_is_refused(
    maddpg_tag_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flag = f"adversary={maddpg_tag_run}"
    code, err = evaluate_in_process(capsys, maddpg_tag_run, "--policy", flag, "--policy", flag)
    assert code == 2 and "--policy adversary: given twice" in err, err
    assert len(err.strip().splitlines()) == 1


def test_damaged_other_checkpoint_points_to_its_earlier_one(
    maddpg_tag_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hint names the other run's intact checkpoint as a --policy value, not RUN's
    --checkpoint."""
    (trial,) = (p for p in maddpg_tag_run.iterdir() if (p / "params.json").exists())
    other = tmp_path / trial.name
    shutil.copytree(trial, other)
    earlier, latest = sorted(other.glob("checkpoint_*"))
    state = latest / MODULES_DIR / DEFAULT_MODULE_ID / "module_state.pkl"
    state.write_bytes(state.read_bytes()[: state.stat().st_size // 2])
    code, err = evaluate_in_process(capsys, maddpg_tag_run, "--policy", f"adversary={other}")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--policy adversary: {state} is damaged" in err, err
    assert err.strip().endswith(f"is intact: --policy adversary={earlier}"), err


def test_single_agent_run_refuses_a_swap(cartpole_run: Path) -> None:
    with pytest.raises(UsageError, match="single-agent policy"):
        apply_swaps(restore_policy(locate(cartpole_run).checkpoint), (PolicySwap("x", Path()),))


def _weights(module: torch.nn.Module) -> list[torch.Tensor]:
    return [weight.detach().clone() for weight in module.parameters()]
