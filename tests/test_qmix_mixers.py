"""The mixers of QMIX and VDN (rlsuite.multiagent.qmix.mixers) on their own: QMIX's is
monotonic in every agent's Q value, the bounded one's gains sum to at most n_agents, VDN's
is the sum."""

from __future__ import annotations

import torch

from rlsuite.multiagent.qmix import QMIXMixer, VDNMixer

N_AGENTS, STATE_DIM = 3, 7


def test_qmix_mixer_is_monotonic_in_every_agent_q() -> None:
    torch.manual_seed(0)
    mixer = QMIXMixer(N_AGENTS, STATE_DIM, embed_dim=8, hypernet_dim=16)
    agent_qs = torch.randn(256, N_AGENTS, requires_grad=True) * 10
    agent_qs.retain_grad()
    mixer(agent_qs, torch.randn(256, STATE_DIM) * 5).sum().backward()
    assert agent_qs.grad is not None
    assert (agent_qs.grad >= 0).all()
    assert (agent_qs.grad > 0).any()  # and not trivially flat


def test_bounded_mixer_gains_sum_to_at_most_n_agents() -> None:
    """The mixer of "qmix_bounded": whatever its hypernetworks output, dQ_tot/dQ_a >= 0 and
    the gains sum to at most n_agents (VDN's); the same hypernetworks through plain QMIX's
    abs() exceed that."""
    torch.manual_seed(0)
    mixer = QMIXMixer(N_AGENTS, STATE_DIM, embed_dim=8, hypernet_dim=16, bounded_gain=True)
    with torch.no_grad():
        for parameter in mixer.parameters():
            parameter.mul_(5.0)  # hypernetwork outputs far from their initial scale
    states = torch.randn(256, STATE_DIM) * 5

    def gains() -> torch.Tensor:
        agent_qs = (torch.randn(256, N_AGENTS) * 10).requires_grad_(True)
        (gain,) = torch.autograd.grad(mixer(agent_qs, states).sum(), agent_qs)
        return gain

    bounded = gains()
    assert (bounded >= 0).all() and (bounded > 0).any()
    assert (bounded.sum(dim=-1) <= N_AGENTS + 1e-4).all(), bounded.sum(dim=-1).max()
    mixer.bounded_gain = False
    assert (gains().sum(dim=-1) > N_AGENTS).any()


def test_vdn_mixer_is_the_sum() -> None:
    agent_qs = torch.randn(32, N_AGENTS)
    mixed = VDNMixer()(agent_qs, torch.randn(32, STATE_DIM))
    torch.testing.assert_close(mixed, agent_qs.sum(dim=-1))
