"""The MASAC RLModule: MADDPG's layout with SAC's stochastic actors and twin critics.

What changes from `MADDPGTorchRLModule` (and why):
- actors output a squashed Gaussian (RLlib's `TorchSquashedGaussian`: mean and log std
  per action dimension, tanh onto [-1, 1]); exploring samples it, inference takes
  tanh(mean), as RLlib's SAC does;
- two critics per policy (`critics`, `twin_critics`) against Q overestimation;
- one learned temperature per policy (`log_alpha`, a parameter of the module so that it
  is checkpointed and restored with the policy it belongs to; RLlib's SAC learner keeps
  one per RLModule, and here one RLModule holds every policy);
- targets: critics only; next actions come from the current actors (SAC has no target
  actor).
Continuous actions only: `MASACConfig.validate` refuses discrete ones.
"""

from __future__ import annotations

import math
from typing import Any, cast

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchSquashedGaussian
from ray.rllib.core.learner.utils import make_target_network
from torch import nn

from rlsuite.multiagent.maddpg.joint_env import OBS
from rlsuite.multiagent.maddpg.module import ACTOR_OUTPUTS, Q_BUFFER, Q_OWN, MADDPGTorchRLModule
from rlsuite.multiagent.maddpg.networks import per_policy, with_own_actions

INITIAL_ALPHA = "initial_alpha"  # model_config key (MASACConfig's initial_alpha)
# forward_train outputs besides MADDPG's Q_BUFFER and Q_OWN (the min of the twins), each
# (B, n_agents):
Q_TWIN_BUFFER = "q_twin_buffer"  # the twin critic on the replayed joint action
LOGP_OWN = "logp_own"  # log prob of agent i's resampled action
Q_NEXT_SOFT = "q_next_soft"  # min target twin on next obs, minus alpha * log prob (no grad)


class MASACTorchRLModule(MADDPGTorchRLModule):
    """Stochastic actors per policy, twin centralized critics, a temperature per policy."""

    def setup(self) -> None:
        super().setup()
        if not self.inference_only:
            self.twin_critics = self._per_policy(self.critic_input_dim(), 1)
            config: dict[str, Any] = dict(self.model_config or {})  # type: ignore[arg-type]
            start = math.log(float(config.get(INITIAL_ALPHA, 1.0)))
            self.log_alpha = nn.ParameterDict(
                {p: nn.Parameter(torch.tensor(start)) for p in self.policy_ids}
            )

    def actor_output_dim(self) -> int:
        return 2 * self.action_dim  # mean and log std

    def action_part(self, outputs: torch.Tensor) -> torch.Tensor:
        """The means, tanh's inputs; the log stds only set how widely the actor explores."""
        return outputs[..., : self.action_dim]

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        out = self.actor_outputs(self.actors, batch[Columns.OBS][OBS])
        return {Columns.ACTIONS: torch.tanh(out[..., : self.action_dim])}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        out = self.actor_outputs(self.actors, batch[Columns.OBS][OBS])
        return {Columns.ACTIONS: TorchSquashedGaussian.from_logits(out).sample()}

    def sample_actions(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Reparameterized actions (B, n, action_dim) and their log probs (B, n)."""
        return self.sample_from(self.actor_outputs(self.actors, obs))

    def sample_from(self, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """`sample_actions` from the actors' outputs (means and log stds)."""
        actions, logp = TorchSquashedGaussian.from_logits(out).rsample_and_logp()
        return actions, logp

    def alphas(self) -> torch.Tensor:
        """(n_agents,) temperatures, each agent's policy's, in agent order."""
        return torch.stack([self.log_alpha[p] for p in self.agent_policies]).exp()

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, next_obs = batch[Columns.OBS][OBS], batch[Columns.NEXT_OBS][OBS]
        buffer_actions = self.action_features(batch[Columns.ACTIONS])
        outputs = self.actor_outputs(self.actors, obs)
        own, logp_own = self.sample_from(outputs)
        joint_own = with_own_actions(buffer_actions, own)
        with torch.no_grad():
            next_actions, logp_next = self.sample_actions(next_obs)
            q_next = self.twin_min(
                self._target_critics, self._target_twin_critics, next_obs, next_actions
            )
            q_next_soft = q_next - self.alphas() * logp_next
        return {
            Q_BUFFER: self.q_values(self.critics, obs, buffer_actions),
            Q_TWIN_BUFFER: self.q_values(self.twin_critics, obs, buffer_actions),
            Q_OWN: self.twin_min(self.critics, self.twin_critics, obs, joint_own),
            LOGP_OWN: logp_own,
            Q_NEXT_SOFT: q_next_soft,
            ACTOR_OUTPUTS: self.action_part(outputs),
        }

    def twin_min(
        self, critics: nn.ModuleDict, twins: nn.ModuleDict, obs: torch.Tensor, actions: torch.Tensor
    ) -> torch.Tensor:
        inputs = self.critic_features(obs, actions)
        first = per_policy(critics, self.agent_policies, inputs)
        second = per_policy(twins, self.agent_policies, inputs)
        return torch.min(first, second).squeeze(-1)

    def forward_target(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS][OBS]
        actions, _ = self.sample_actions(obs)
        return {
            Q_NEXT_SOFT: self.twin_min(
                self._target_critics, self._target_twin_critics, obs, actions
            )
        }

    def make_target_networks(self) -> None:
        self._target_critics = cast(nn.ModuleDict, make_target_network(self.critics))
        self._target_twin_critics = cast(nn.ModuleDict, make_target_network(self.twin_critics))

    def get_target_network_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        return [
            (self.critics, self._target_critics),
            (self.twin_critics, self._target_twin_critics),
        ]

    def get_non_inference_attributes(self) -> list[str]:
        return [
            "critics",
            "twin_critics",
            "log_alpha",
            "_target_critics",
            "_target_twin_critics",
        ]
