"""The MADDPG RLModule: decentralized actors, one centralized critic per policy, targets.

Input: `JointEnv`'s observation (`obs` (B, n_agents, obs_dim) and `agent_rewards`).
- Actors (one MLP per policy, `model_config["agent_policies"]` maps agents to policies in
  the env's agent order) read only their own agent's row of `obs`. Continuous actions:
  tanh of the output (RLlib's `normalize_actions` maps [-1, 1] onto the env's bounds),
  plus Gaussian noise of scale `exploration_noise` when exploring. Discrete actions:
  the output is logits; exploring samples from them, the actor update and the targets use
  straight-through Gumbel-softmax one-hots (Lowe et al. 2017, sec. 4), so the critic
  always sees one-hot actions, like the buffer's.
- Critics (one MLP per policy, `networks.critic_inputs`) read every agent's observation
  and action, in the env's fixed agent order, plus the valued agent's one-hot. The
  critics of the policies in `model_config["local_critics"]` read their own agent's only:
  independent DDPG (or SAC), the baseline MADDPG is compared with.
- Target copies of actors and critics, updated by DQN's learner with Polyak averaging
  (`tau`, every `target_network_update_freq` env steps) through `TargetNetworkAPI`.

Env runners build the module `inference_only`: actors only. RLlib 2.60 has no DDPG on
the new API stack; its `DefaultSACTorchRLModule` is single-agent (one observation in its
critic), so this module is the suite's own, built from RLlib's MLP heads.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.utils import make_target_network
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, QNetAPI, TargetNetworkAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from torch import nn

from rlsuite.multiagent.maddpg.joint_env import OBS
from rlsuite.multiagent.maddpg.networks import (
    critic_inputs,
    critic_sight,
    mlp,
    per_policy,
    with_own_actions,
)
from rlsuite.multiagent.policies import SHARED

# model_config keys the MADDPG config adds (MADDPGConfig._model_config_auto_includes).
AGENT_POLICIES = "agent_policies"
EXPLORATION_NOISE = "exploration_noise"
LOCAL_CRITICS = "local_critics"
# forward_train outputs, each (B, n_agents): agent i's critic value of ...
Q_BUFFER = "q_buffer"  # ... the replayed joint action
Q_OWN = "q_own"  # ... the joint action with agent i's from its current policy
Q_TARGET_NEXT = "q_target_next"  # ... the next step, target actors' actions, target critic
# (B, n_agents, actor output): the actors' raw outputs (logits, or tanh's inputs), which
# `actor_output_reg` penalizes
ACTOR_OUTPUTS = "actor_outputs"


class MADDPGTorchRLModule(TorchRLModule, InferenceOnlyAPI, TargetNetworkAPI, QNetAPI):
    """Actors per policy on own observations; centralized critics per policy."""

    def setup(self) -> None:
        obs_space: Any = self.observation_space
        self.n_agents, self.obs_dim = obs_space[OBS].shape
        self.discrete = isinstance(self.action_space, gym.spaces.MultiDiscrete)
        action_space: Any = self.action_space
        self.action_dim = int(action_space.nvec[0]) if self.discrete else action_space.shape[-1]
        config: dict[str, Any] = dict(self.model_config or {})  # type: ignore[arg-type]
        self.agent_policies = tuple(config.get(AGENT_POLICIES) or [SHARED] * self.n_agents)
        if len(self.agent_policies) != self.n_agents:
            raise ValueError(
                f"agent_policies names {len(self.agent_policies)} agents, the env has "
                f"{self.n_agents}"
            )
        self.hiddens = list(config.get("fcnet_hiddens") or [64, 64])
        self.activation = str(config.get("fcnet_activation", "relu"))
        self.exploration_noise = float(config.get(EXPLORATION_NOISE, 0.1))
        # dict.fromkeys: one network per policy, in the order agents first name them.
        self.policy_ids = list(dict.fromkeys(self.agent_policies))
        self.sight = critic_sight(self.agent_policies, set(config.get(LOCAL_CRITICS) or ()))
        self.actors = self._per_policy(self.obs_dim, self.actor_output_dim())
        if not self.inference_only:
            self.critics = self._per_policy(self.critic_input_dim(), 1)

    def actor_output_dim(self) -> int:
        return self.action_dim

    def critic_input_dim(self) -> int:
        return self.n_agents * (self.obs_dim + self.action_dim + 1)

    def _per_policy(self, in_dim: int, out_dim: int) -> nn.ModuleDict:
        return nn.ModuleDict(
            {p: mlp(in_dim, self.hiddens, self.activation, out_dim) for p in self.policy_ids}
        )

    # --- acting (env runners: actors only) ----------------------------------------------
    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        out = self.actor_outputs(self.actors, batch[Columns.OBS][OBS])
        return {Columns.ACTIONS: out.argmax(dim=-1) if self.discrete else torch.tanh(out)}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        out = self.actor_outputs(self.actors, batch[Columns.OBS][OBS])
        if self.discrete:
            actions = torch.distributions.Categorical(logits=out).sample()
        else:
            noise = self.exploration_noise * torch.randn_like(out)
            actions = torch.clamp(torch.tanh(out) + noise, -1.0, 1.0)
        return {Columns.ACTIONS: actions}

    def actor_outputs(self, actors: nn.ModuleDict, obs: torch.Tensor) -> torch.Tensor:
        """(B, n_agents, out): each agent's actor on its own observation (its row only)."""
        return per_policy(actors, self.agent_policies, obs)

    def action_part(self, outputs: torch.Tensor) -> torch.Tensor:
        """What of `actor_outputs` sets the action (logits, or tanh's inputs): what
        saturates, so what `actor_output_reg` penalizes and the saturation statistics read."""
        return outputs

    # --- learning -----------------------------------------------------------------------
    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, next_obs = batch[Columns.OBS][OBS], batch[Columns.NEXT_OBS][OBS]
        buffer_actions = self.action_features(batch[Columns.ACTIONS])
        outputs = self.actor_outputs(self.actors, obs)
        own = self.actions_from(outputs)
        with torch.no_grad():
            next_actions = self.policy_actions(self._target_actors, next_obs)
            q_target_next = self.q_values(self._target_critics, next_obs, next_actions)
        return {
            Q_BUFFER: self.q_values(self.critics, obs, buffer_actions),
            Q_OWN: self.q_values(self.critics, obs, with_own_actions(buffer_actions, own)),
            Q_TARGET_NEXT: q_target_next,
            ACTOR_OUTPUTS: self.action_part(outputs),
        }

    def policy_actions(self, actors: nn.ModuleDict, obs: torch.Tensor) -> torch.Tensor:
        """(B, n_agents, action_dim), differentiable: tanh outputs, or Gumbel one-hots."""
        return self.actions_from(self.actor_outputs(actors, obs))

    def actions_from(self, out: torch.Tensor) -> torch.Tensor:
        """`policy_actions` from the actors' outputs."""
        if self.discrete:
            return nn.functional.gumbel_softmax(out, hard=True)
        return torch.tanh(out)

    def action_features(self, actions: torch.Tensor) -> torch.Tensor:
        """Replayed actions as the critic reads them: one-hots for discrete ones."""
        if self.discrete:
            return nn.functional.one_hot(actions.long(), self.action_dim).float()
        return actions.float()

    def q_values(
        self, critics: nn.ModuleDict, obs: torch.Tensor, actions: torch.Tensor
    ) -> torch.Tensor:
        """(B, n_agents): agent i's critic (its policy's) on `critic_inputs` row i."""
        inputs = self.critic_features(obs, actions)
        return per_policy(critics, self.agent_policies, inputs).squeeze(-1)

    def critic_features(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """`critic_inputs` as this module's critics see them (local critics: own agent)."""
        return critic_inputs(obs, actions, self.sight.to(obs.device))

    def compute_q_values(self, batch: dict[str, Any]) -> dict[str, Any]:
        """QNetAPI (which DQN's learner requires): the critics on the replayed actions."""
        actions = self.action_features(batch[Columns.ACTIONS])
        return {Q_BUFFER: self.q_values(self.critics, batch[Columns.OBS][OBS], actions)}

    def forward_target(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS][OBS]
        actions = self.policy_actions(self._target_actors, obs)
        return {Q_TARGET_NEXT: self.q_values(self._target_critics, obs, actions)}

    def make_target_networks(self) -> None:
        self._target_actors = cast(nn.ModuleDict, make_target_network(self.actors))
        self._target_critics = cast(nn.ModuleDict, make_target_network(self.critics))

    def get_target_network_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        return [(self.actors, self._target_actors), (self.critics, self._target_critics)]

    def get_non_inference_attributes(self) -> list[str]:
        return ["critics", "_target_actors", "_target_critics"]
