"""`rlsuite.evaluate RUN --policy ID=OTHER_RUN`: cross-play, one policy's weights from
another run.

Mixed games are judged by who plays whom: Lowe et al. (2017) compare MADDPG hunters with
independent-DDPG hunters against the same prey, which needs one run's hunters to meet
another run's prey. `--policy adversary=results/maddpg_tag_ddpg` plays RUN with the
`adversary` policy's weights taken from the other run's checkpoint (its best trial's
latest, as for PATH), the rest of RUN as it is; the connectors stay RUN's.

Both runs must have the policy, with the same spaces and network: a policy of a
multi-agent run is its RLModule, whose weights are copied; a policy of a team trained as one agent
(MADDPG, MASAC) is its actor inside the team's module, whose weights are copied.
Across algorithms, a multi-agent run's policy (PPO's, say) plays inside a team in discrete
actions (`foreign_actor`): RUN is the team's run, so the game runs on the team's rollout.
Anything else is one line before anything plays.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite.errors import UsageError
from rlsuite.evaluation.acting import ConnectedPolicy
from rlsuite.evaluation.damage import (
    DamagedCheckpointError,
    check_intact,
    earlier_intact,
    restoring,
)
from rlsuite.evaluation.foreign_actor import module_as_actor
from rlsuite.evaluation.joint import JointPolicy
from rlsuite.evaluation.locate import locate
from rlsuite.evaluation.multiagent import MultiAgentPolicy
from rlsuite.evaluation.policy import load_module, module_ids


@dataclass(frozen=True)
class PolicySwap:
    """`--policy ID=PATH`."""

    policy_id: str
    path: Path

    @classmethod
    def parse(cls, text: str) -> PolicySwap:
        policy_id, sep, path = text.partition("=")
        if not sep or not policy_id or not path:
            raise UsageError(
                f"--policy {text}: expected ID=PATH, e.g. --policy adversary=results/other_run"
            )
        return cls(policy_id, Path(path))


def parse_swaps(texts: tuple[str, ...]) -> tuple[PolicySwap, ...]:
    """`--policy` flags, each checked for its form and for a checkpoint at its path before
    the run's own policy is restored; a policy named twice is refused, not overridden."""
    swaps = tuple(PolicySwap.parse(text) for text in texts)
    seen: set[str] = set()
    for swap in swaps:
        if swap.policy_id in seen:
            raise UsageError(f"--policy {swap.policy_id}: given twice; give each policy once")
        seen.add(swap.policy_id)
        try:
            locate(swap.path)
        except UsageError as error:  # say which flag: RUN's own path is checked the same way
            raise UsageError(f"--policy {swap.policy_id}={swap.path}: {error}") from None
    return swaps


def apply_swaps(policy: ConnectedPolicy, swaps: tuple[PolicySwap, ...]) -> list[str]:
    """Put each swap's weights into `policy`; one line per swap saying where they came from."""
    if swaps and not isinstance(policy, MultiAgentPolicy | JointPolicy):
        raise UsageError(
            "--policy swaps one policy of a multi-agent run for another run's; this "
            "checkpoint has a single-agent policy"
        )
    lines = []
    for swap in swaps:
        checkpoint = locate(swap.path).checkpoint
        try:
            check_intact(checkpoint)
            with restoring(checkpoint):
                _swap(policy, swap.policy_id, checkpoint)
        except DamagedCheckpointError as error:
            # Not rlsuite.evaluate's own hint, which names RUN's --checkpoint.
            raise UsageError(f"--policy {swap.policy_id}: {error}{_earlier(swap, error)}") from None
        lines.append(f"policy {swap.policy_id} from {checkpoint}")
    return lines


def _swap(policy: ConnectedPolicy, policy_id: str, checkpoint: Path) -> None:
    if isinstance(policy, MultiAgentPolicy):
        _swap_module(policy, policy_id, checkpoint)
    else:
        assert isinstance(policy, JointPolicy)
        _swap_actor(policy, policy_id, checkpoint)


def _earlier(swap: PolicySwap, error: DamagedCheckpointError) -> str:
    earlier = earlier_intact(error.checkpoint)
    if earlier is None:
        return ""
    return f"; its trial's previous checkpoint is intact: --policy {swap.policy_id}={earlier}"


def _swap_module(policy: MultiAgentPolicy, policy_id: str, checkpoint: Path) -> None:
    _check_named(policy_id, list(policy.module.keys()), "this checkpoint")
    ids = module_ids(checkpoint)
    if ids == [DEFAULT_MODULE_ID] and _team_actors(checkpoint) is not None:
        raise UsageError(
            f"--policy {policy_id}: {checkpoint} is a team trained as one agent (MADDPG, "
            "MASAC), which plays on its own rollout: evaluate that run and swap this one's "
            f"policy into it (rlsuite.evaluate OTHER_RUN --policy {policy_id}=THIS_RUN)"
        )
    _check_named(policy_id, ids, str(checkpoint))
    current, other = policy.module[policy_id], load_module(checkpoint, policy_id)
    spaces = (current.observation_space, current.action_space)
    if (other.observation_space, other.action_space) != spaces:
        raise UsageError(
            f"--policy {policy_id}: {checkpoint}'s policy has other observation or action "
            "spaces than this run's; swap a policy trained on the same env"
        )
    _copy_weights(policy_id, other, current, checkpoint)


def _swap_actor(policy: JointPolicy, policy_id: str, checkpoint: Path) -> None:
    team: Any = policy.module
    _check_named(policy_id, list(team.actors.keys()), "this checkpoint's team")
    ids = module_ids(checkpoint)
    if ids != [DEFAULT_MODULE_ID]:  # a multi-agent run's policy, another algorithm's
        _check_named(policy_id, ids, str(checkpoint))
        other = load_module(checkpoint, policy_id)
        team.actors[policy_id] = module_as_actor(policy_id, team, other, checkpoint)
        return
    actors = _team_actors(checkpoint)
    if actors is None:
        raise UsageError(
            f"--policy {policy_id}: {checkpoint} is a single-agent run; swap in a team "
            "trained as one agent (MADDPG, MASAC) or a multi-agent run's policy"
        )
    _check_named(policy_id, list(actors.keys()), f"{checkpoint}'s team")
    _copy_weights(policy_id, actors[policy_id], team.actors[policy_id], checkpoint)


def _team_actors(checkpoint: Path) -> Any:
    """The actors of a team trained as one agent, or None for any other checkpoint."""
    return getattr(load_module(checkpoint), "actors", None)


def _copy_weights(policy_id: str, source: Any, target: Any, checkpoint: Path) -> None:
    assert isinstance(source, torch.nn.Module) and isinstance(target, torch.nn.Module)
    theirs, ours = source.state_dict(), target.state_dict()
    if {k: v.shape for k, v in theirs.items()} != {k: v.shape for k, v in ours.items()}:
        raise UsageError(
            f"--policy {policy_id}: {checkpoint}'s network has other layers or sizes than "
            "this run's; swap a policy trained with the same model config"
        )
    target.load_state_dict(theirs)


def _check_named(policy_id: str, ids: list[str], where: str) -> None:
    if policy_id not in ids:
        raise UsageError(
            f"--policy {policy_id}: {where} has no policy '{policy_id}' (it has "
            f"{', '.join(ids) or 'none'})"
        )
