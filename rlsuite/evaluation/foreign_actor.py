"""Another algorithm's policy acting inside a MADDPG or MASAC team: PPO hunters against
MADDPG prey, on the team's own rollout.

A team's actors take each agent's observation row, zero-padded to the longest agent's
(`JointEnv`), and return action logits for discrete actions; the team acts greedily on
their argmax and explores by Gumbel-softmax sampling from them. A multi-agent run's
RLModule (PPO, APPO, ...) returns `action_dist_inputs`, the logits of its Categorical, from
the same observation unpadded. So for discrete actions the module drops in: the row cut to
its observation size, its logits out. Continuous actions do not: a team's actor gives the
pre-tanh action and RLModules give distribution parameters in the env's bounds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from torch import nn

from rlsuite.errors import UsageError


class ModuleAsActor(nn.Module):
    """An RLModule as a team's actor: rows (B, k, obs_dim) in, logits (B, k, actions) out."""

    def __init__(self, module: RLModule, obs_size: int) -> None:
        super().__init__()
        assert isinstance(module, nn.Module)
        self.module = module
        self.obs_size = obs_size

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        batch, agents, _ = rows.shape
        obs = rows[..., : self.obs_size].reshape(batch * agents, self.obs_size)
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: obs})
        logits = out[Columns.ACTION_DIST_INPUTS]
        return logits.reshape(batch, agents, -1)


def module_as_actor(policy_id: str, team: Any, module: RLModule, checkpoint: Path) -> nn.Module:
    """`module` (from `checkpoint`) wrapped to act as `team`'s actor for `policy_id`, or one
    line saying why it cannot."""
    where = f"--policy {policy_id}: {checkpoint}'s policy"
    if not team.discrete:
        raise UsageError(
            f"{where} is another algorithm's; a team with continuous actions (MADDPG, MASAC) "
            "takes only its own kind's actors: swap between runs of the same algorithm"
        )
    obs_space, action_space = module.observation_space, module.action_space
    if not isinstance(obs_space, gym.spaces.Box) or len(obs_space.shape) != 1:
        raise UsageError(
            f"{where} takes {obs_space} observations; a team's actor takes flat vectors"
        )
    if not isinstance(action_space, gym.spaces.Discrete):
        raise UsageError(f"{where} acts in {action_space}; this team acts in discrete actions")
    actions = team.actor_output_dim()
    size = int(obs_space.shape[0])
    if int(action_space.n) != actions or size > team.obs_dim:
        raise UsageError(
            f"{where} takes {size} observations and {action_space.n} actions, this team's "
            f"agents at most {team.obs_dim} and {actions}; swap a policy trained on the same env"
        )
    if not isinstance(module, nn.Module):
        raise UsageError(f"{where} is not a torch RLModule")
    module.eval()
    actor = ModuleAsActor(module, size)
    try:  # one probe: a module that acts without logits (say, Q values) fails here, not mid-play
        probe = actor(torch.zeros(1, 1, size))
    except KeyError:
        probe = None
    if probe is None or probe.shape != (1, 1, actions):
        raise UsageError(
            f"{where} gives no {Columns.ACTION_DIST_INPUTS} of {actions} logits from "
            "forward_inference; swap a policy gradient run's policy (PPO, APPO, IMPALA)"
        )
    return actor
