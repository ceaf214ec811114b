"""Where a QMIX module's team value comes from: the agents' Q values, or the mixer.

QMIX's Q_tot = w2(s) . elu(W1(s) q + b1(s)) + V(s) can carry a state's value through its
hypernetworks alone (V(s) and w2(s) . elu(b1(s))) while the agents' Q values stay small,
and its gain dQ_tot/dQ_a = sum_k |W1|_ak elu'(.)_k |w2|_k has no bound: an error in an
agent's Q value reaches the TD target multiplied by it. `mixer_breakdown` measures both on
a batch of team observations (`scripts/qmix_mixer_gain.py` runs it over a run's
checkpoints); docs/multiagent.md shows what it found when QMIX diverged.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.dqn.default_dqn_rl_module import QF_PREDS
from ray.rllib.core.columns import Columns

from rlsuite.multiagent.qmix.team_env import STATE


def mixer_breakdown(module: Any, obs: dict[str, torch.Tensor]) -> dict[str, float]:
    """Means over the batch, at each agent's greedy action: the agents' Q values, Q_tot, the
    state-only part of Q_tot (its value with every agent's Q at 0), V(s), and the gain."""
    mixer = module.mixer
    if not hasattr(mixer, "hyper_w1"):
        raise ValueError("the module's mixer is not QMIX's (VDN's sum has gain 1 and no state)")
    with torch.no_grad():
        greedy = module.compute_q_values({Columns.OBS: obs})[QF_PREDS].max(dim=-1).values
    agent_qs = greedy.clone().requires_grad_(True)
    state = obs[STATE]
    q_tot = mixer(agent_qs, state)
    (gain,) = torch.autograd.grad(q_tot.sum(), agent_qs)
    with torch.no_grad():
        state_only = mixer(torch.zeros_like(greedy), state)
        value = mixer.hyper_v(state).squeeze(-1)
    return {
        "agent_q": float(greedy.mean()),
        "q_tot": float(q_tot.detach().mean()),
        "state_only": float(state_only.mean()),
        "v": float(value.mean()),
        "gain": float(gain.mean()),
    }
