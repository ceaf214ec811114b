"""The QMIX/VDN TD loss on Q_tot, in a subclass of RLlib's DQN torch learner.

From `DQNLearner` it keeps everything but the loss: building the target networks (through
the module's `TargetNetworkAPI`), adding `next_obs` to the train batch, and updating the
targets every `target_network_update_freq` env steps. The loss is new (RLlib's is per
agent, with no mixer):

    Q_tot(s, u)   = mixer(Q_a(o_a, u_a) for each agent a; s)
    target        = r + gamma^n (1 - terminated) target_mixer(Q'_a(o'_a, u*_a); s')
                    (r standardized by its running mean and std with standardize_rewards)
    u*_a          = argmax over available actions of Q_a(o'_a, .)   (double Q: online net)
    loss          = mean(importance weight * huber or mse(Q_tot - target))

per joint transition; TD errors go to RLlib's prioritized episode buffer as DQN's do.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.dqn.dqn_learner import (
    QF_LOSS_KEY,
    QF_MAX_KEY,
    QF_MEAN_KEY,
    QF_MIN_KEY,
    QF_NEXT_PREDS,
    QF_PREDS,
    QF_TARGET_NEXT_PREDS,
    TD_ERROR_MEAN_KEY,
)
from ray.rllib.algorithms.dqn.torch.dqn_torch_learner import DQNTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.utils.metrics import TD_ERROR_KEY
from torch import nn

from rlsuite.multiagent.qmix.team_env import STATE


class QMIXTorchLearner(DQNTorchLearner):
    """DQN's learner with the TD loss on the mixed team value."""

    def compute_loss_for_module(
        self, *, module_id: str, config: Any, batch: dict[str, Any], fwd_out: dict[str, Any]
    ) -> torch.Tensor:
        module: Any = self.module[module_id].unwrapped()
        chosen = chosen_qs(fwd_out[QF_PREDS], batch[Columns.ACTIONS])
        q_tot = module.mix(chosen, batch[Columns.OBS][STATE])
        rewards = batch[Columns.REWARDS].float()
        if module.reward_stats is not None:
            module.reward_stats.update(rewards)
            rewards = module.reward_stats.standardize(rewards)
        target = td_targets(module, batch, fwd_out, config.gamma, config.double_q, rewards)
        loss_fn = nn.HuberLoss if config.td_error_loss_fn == "huber" else nn.MSELoss
        loss = torch.mean(batch["weights"] * loss_fn(reduction="none")(q_tot, target))
        td_error = torch.abs(q_tot - target)
        # One TD error per sampled transition: priorities for RLlib's prioritized buffer.
        self.metrics.log_value((module_id, TD_ERROR_KEY), td_error, reduce="item_series")
        self.metrics.log_dict(
            {
                QF_LOSS_KEY: loss,
                QF_MEAN_KEY: q_tot.mean(),
                QF_MAX_KEY: q_tot.max(),
                QF_MIN_KEY: q_tot.min(),
                TD_ERROR_MEAN_KEY: td_error.mean(),
            },
            key=module_id,
            window=1,
        )
        return loss


def chosen_qs(agent_qs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """(B, n_agents, n_actions) Q values, (B, n_agents) actions -> (B, n_agents)."""
    chosen = agent_qs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
    # An agent absent from a step has every action available and acts on nothing; -inf
    # never reaches here for available actions.
    return torch.nan_to_num(chosen, neginf=0.0)


@torch.no_grad()
def td_targets(
    module: Any,
    batch: dict[str, Any],
    fwd_out: dict[str, Any],
    gamma: float,
    double_q: bool = True,
    rewards: torch.Tensor | None = None,
) -> torch.Tensor:
    """(B,) TD targets from the target network and target mixer (see the module docstring);
    `rewards` in place of the batch's (standardized ones)."""
    target_next = fwd_out[QF_TARGET_NEXT_PREDS]
    chooser = fwd_out[QF_NEXT_PREDS] if double_q else target_next
    next_actions = chooser.argmax(dim=-1)
    next_q = chosen_qs(target_next, next_actions)
    q_tot_next = module.mix_target(next_q, batch[Columns.NEXT_OBS][STATE])
    not_terminated = 1.0 - batch[Columns.TERMINATEDS].float()
    discount = gamma ** batch["n_step"].float() if "n_step" in batch else gamma
    if rewards is None:
        rewards = batch[Columns.REWARDS].float()
    return rewards + discount * not_terminated * q_tot_next
