"""The mixers of value decomposition: how per-agent Q values make the team's Q_tot.

- VDN (Sunehag et al. 2018): Q_tot = sum of the agents' chosen Q values. No parameters.
- QMIX (Rashid et al. 2018): Q_tot = w2 . elu(W1 q + b1) + V(s), where W1, b1, w2 and V
  are outputs of hypernetworks on the global state s. W1 and w2 pass through abs(), so
  dQ_tot/dQ_a >= 0 for every agent a: the greedy joint action of Q_tot is each agent's own
  greedy action (decentralized acting stays consistent with the centralized value).
- QMIX with a bounded gain ("qmix_bounded"): the same network, but W1's weights are a
  softmax over the agents and w2's are n_agents times a softmax over the embedding units
  (normalized, positive weights, as Qatten's attention weights over agents; Yang et al.
  2020). dQ_tot/dQ_a stays in (0, n_agents] and the gains sum to at most n_agents, VDN's
  sum. Plain QMIX's gain has no bound: docs/multiagent.md measured it growing into the
  hundreds while QMIX diverged on simple_spread.

RLlib has no mixer; these are small torch modules owned by the QMIX RLModule, so their
weights are checkpointed, synced and target-copied with the agents' Q network.
"""

from __future__ import annotations

import torch
from torch import nn

VDN = "vdn"
QMIX = "qmix"
QMIX_BOUNDED = "qmix_bounded"
MIXERS = (QMIX, QMIX_BOUNDED, VDN)


class VDNMixer(nn.Module):
    """Q_tot = sum over agents (the state is not used)."""

    def forward(self, agent_qs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """(B, n_agents) chosen Q values, (B, state_dim) states -> (B,) Q_tot."""
        return agent_qs.sum(dim=-1)


class QMIXMixer(nn.Module):
    """A monotonic two-layer mixing network whose weights come from the state."""

    def __init__(
        self,
        n_agents: int,
        state_dim: int,
        embed_dim: int,
        hypernet_dim: int,
        bounded_gain: bool = False,
    ) -> None:
        super().__init__()
        self.n_agents = n_agents
        self.embed_dim = embed_dim
        self.bounded_gain = bounded_gain
        # Two-layer hypernetworks for the weights (PyMARL's hypernet_layers=2 setting).
        self.hyper_w1 = _hypernet(state_dim, hypernet_dim, n_agents * embed_dim)
        self.hyper_w2 = _hypernet(state_dim, hypernet_dim, embed_dim)
        self.hyper_b1 = nn.Linear(state_dim, embed_dim)
        # The state-dependent bias V(s) is not constrained: it does not affect monotonicity.
        self.hyper_v = _hypernet(state_dim, embed_dim, 1)

    def forward(self, agent_qs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """(B, n_agents) chosen Q values, (B, state_dim) states -> (B,) Q_tot."""
        batch = agent_qs.shape[0]
        w1 = self.hyper_w1(state).view(batch, self.n_agents, self.embed_dim)
        w2 = self.hyper_w2(state).view(batch, self.embed_dim, 1)
        if self.bounded_gain:  # each unit a weighted mean of the agents; w2 sums to n_agents
            w1, w2 = torch.softmax(w1, dim=1), self.n_agents * torch.softmax(w2, dim=1)
        else:
            w1, w2 = torch.abs(w1), torch.abs(w2)
        b1 = self.hyper_b1(state).view(batch, 1, self.embed_dim)
        hidden = nn.functional.elu(torch.bmm(agent_qs.view(batch, 1, -1), w1) + b1)
        v = self.hyper_v(state).view(batch, 1, 1)
        return (torch.bmm(hidden, w2) + v).view(batch)


def build_mixer(
    name: str, n_agents: int, state_dim: int, embed_dim: int, hypernet_dim: int
) -> nn.Module:
    """The mixer called `name` (one of MIXERS)."""
    if name == VDN:
        return VDNMixer()
    if name in (QMIX, QMIX_BOUNDED):
        return QMIXMixer(n_agents, state_dim, embed_dim, hypernet_dim, name == QMIX_BOUNDED)
    raise ValueError(f"unknown mixer '{name}'; use one of {', '.join(MIXERS)}")


def _hypernet(in_dim: int, hidden: int, out_dim: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))
