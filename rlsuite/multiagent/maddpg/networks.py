"""The tensor plumbing of centralized critics: what each agent's critic sees.

Agent i's critic reads `[o_1, ..., o_n, a_1, ..., a_n, onehot(i)]`: every agent's
observation and action in the env's fixed agent order (`JointEnv`'s), then which agent
it values (a local critic, `critic_sight`, reads zeros in place of the others'). The
one-hot lets one critic serve a policy shared by several agents (their rewards differ,
e.g. spread's collision penalties); with one agent per policy it is constant and
harmless. In the actor update, agent i's own action comes from its current
policy and the others' from the replay buffer (Lowe et al. 2017, eq. 5).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import torch
from ray.rllib.core.models.configs import MLPHeadConfig
from torch import nn


def mlp(in_dim: int, hiddens: Sequence[int], activation: str, out_dim: int) -> nn.Module:
    """RLlib's MLP head (the layers `model_config`'s fcnet settings describe)."""
    return MLPHeadConfig(
        input_dims=[in_dim],
        hidden_layer_dims=list(hiddens),
        hidden_layer_activation=activation,
        output_layer_dim=out_dim,
    ).build(framework="torch")


def critic_inputs(
    obs: torch.Tensor, actions: torch.Tensor, sight: torch.Tensor | None = None
) -> torch.Tensor:
    """Every agent's critic input, (B, n_agents, n*obs_dim + n*action_dim + n).

    obs: (B, n, obs_dim). actions: (B, n, action_dim), the same joint action for every
    critic, or (B, n, n, action_dim), row i the joint action agent i's critic values.
    sight: (n, n) booleans, row i the agents whose observation and action agent i's
    critic sees (`critic_sight`); the others' are zeros. None: every critic sees all."""
    batch, n_agents = obs.shape[0], obs.shape[1]
    if actions.dim() == 3:
        actions = actions.unsqueeze(1).expand(-1, n_agents, -1, -1)
    all_obs = obs.unsqueeze(1).expand(-1, n_agents, -1, -1)  # (B, n critics, n agents, obs)
    if sight is not None:
        seen = sight[None, :, :, None].to(obs.dtype)
        all_obs, actions = all_obs * seen, actions * seen
    ids = torch.eye(n_agents, device=obs.device).expand(batch, -1, -1)
    return torch.cat(
        [all_obs.reshape(batch, n_agents, -1), actions.reshape(batch, n_agents, -1), ids], dim=-1
    )


def critic_sight(agent_policies: Sequence[str], local_critics: Collection[str]) -> torch.Tensor:
    """(n, n) booleans: a critic of a policy in `local_critics` sees only its own agent
    (independent DDPG, the baseline of Lowe et al. 2017); the others see every agent.
    Zeroed inputs leave the network's shape, and so checkpoints and the code, one."""
    n_agents = len(agent_policies)
    sight = torch.ones(n_agents, n_agents, dtype=torch.bool)
    for agent, policy in enumerate(agent_policies):
        if policy in local_critics:
            sight[agent] = False
            sight[agent, agent] = True
    return sight


def with_own_actions(buffer_actions: torch.Tensor, own_actions: torch.Tensor) -> torch.Tensor:
    """(B, n, n, action_dim): row i is the buffer's joint action with agent i's action
    replaced by `own_actions[:, i]` (its current policy's, with gradients)."""
    n_agents = buffer_actions.shape[1]
    diagonal = torch.eye(n_agents, dtype=torch.bool, device=buffer_actions.device)
    return torch.where(
        diagonal[None, :, :, None], own_actions.unsqueeze(1), buffer_actions.unsqueeze(1)
    )


def per_policy(
    networks: nn.ModuleDict, agent_policies: Sequence[str], inputs: torch.Tensor
) -> torch.Tensor:
    """Each agent's rows (B, n, in) through its policy's network: (B, n, out). One call
    per policy, on the agents that share it."""
    outputs: list[torch.Tensor | None] = [None] * len(agent_policies)
    for policy, network in networks.items():
        index = [i for i, p in enumerate(agent_policies) if p == policy]
        result = network(inputs[:, index])
        for column, agent in enumerate(index):
            outputs[agent] = result[:, column]
    return torch.stack([o for o in outputs if o is not None], dim=1)
