"""The QMIX/VDN RLModule: one Q network shared by the agents, the mixer, target copies.

Input: `TeamEnv`'s observation (`obs` (B, n_agents, obs_dim), `state`, `action_mask`).
Each agent's Q values come from one MLP (RLlib's `MLPHeadConfig`, sized by
`model_config`'s `fcnet_hiddens`/`fcnet_activation`) over its observation and its
agent-id one-hot (parameter sharing, as in PyMARL). Unavailable actions get -inf, so
greedy and random choices, and the double-Q argmax of the targets, never pick them.

The module implements RLlib's `QNetAPI` and `TargetNetworkAPI`, so DQN's learner builds
and updates the target copies (`target_network_update_freq`, `tau`) of the Q network and
of the mixer; env runners build it `inference_only`, without mixer and targets. RLlib's
`DefaultDQNTorchRLModule` acts per observation with one categorical head and samples
random actions jointly; the per-agent heads, masks and mixer are what it lacks.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.dqn.default_dqn_rl_module import (
    QF_NEXT_PREDS,
    QF_PREDS,
    QF_TARGET_NEXT_PREDS,
)
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.utils import make_target_network
from ray.rllib.core.models.configs import MLPHeadConfig
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, QNetAPI, TargetNetworkAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.utils.schedules.scheduler import Scheduler
from torch import nn

from rlsuite.multiagent.qmix.mixers import build_mixer
from rlsuite.multiagent.qmix.reward_stats import RunningRewardStats
from rlsuite.multiagent.qmix.team_env import MASK, STATE

# model_config keys the QMIX config adds (QMIXConfig._model_config_auto_includes).
MIXER = "mixer"
MIXING_EMBED_DIM = "mixing_embed_dim"
HYPERNET_EMBED_DIM = "hypernet_embed_dim"
STANDARDIZE_REWARDS = "standardize_rewards"


class QMIXTorchRLModule(TorchRLModule, InferenceOnlyAPI, TargetNetworkAPI, QNetAPI):
    """Per-agent Q values with a shared network; Q_tot through `mix`/`mix_target`."""

    def setup(self) -> None:
        space: Any = self.observation_space
        self.n_agents, obs_dim = space["obs"].shape
        n_actions = space[MASK].shape[1]
        config: dict[str, Any] = dict(self.model_config or {})  # type: ignore[arg-type]
        self.agent_q: nn.Module = MLPHeadConfig(
            input_dims=[obs_dim + self.n_agents],
            hidden_layer_dims=list(config.get("fcnet_hiddens") or [64]),
            hidden_layer_activation=config.get("fcnet_activation", "relu"),
            output_layer_dim=n_actions,
        ).build(framework="torch")
        self.mixer = build_mixer(
            config.get(MIXER, "qmix"),
            self.n_agents,
            space[STATE].shape[0],
            int(config.get(MIXING_EMBED_DIM, 32)),
            int(config.get(HYPERNET_EMBED_DIM, 64)),
        )
        # Only where asked for: a module without them restores checkpoints written before.
        self.reward_stats: RunningRewardStats | None = (
            RunningRewardStats() if config.get(STANDARDIZE_REWARDS) else None
        )
        self.epsilon_schedule = Scheduler(config.get("epsilon", 0.05), framework="torch")
        self.register_buffer("agent_ids", torch.eye(self.n_agents), persistent=False)

    # --- acting -----------------------------------------------------------------------
    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        q = self.compute_q_values(batch)[QF_PREDS]
        return {Columns.ACTIONS: q.argmax(dim=-1)}

    def _forward_exploration(
        self, batch: dict[str, Any], t: int = 0, **kwargs: Any
    ) -> dict[str, Any]:
        q = self.compute_q_values(batch)[QF_PREDS]
        self.epsilon_schedule.update(t)
        epsilon = float(self.epsilon_schedule.get_current_value())
        return {Columns.ACTIONS: epsilon_greedy(q, batch[Columns.OBS][MASK], epsilon)}

    # --- learning ---------------------------------------------------------------------
    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Online Q on obs and next obs (for the double-Q argmax), target Q on next obs."""
        return {
            QF_PREDS: self.compute_q_values(batch)[QF_PREDS],
            QF_NEXT_PREDS: self.compute_q_values({Columns.OBS: batch[Columns.NEXT_OBS]})[QF_PREDS],
            QF_TARGET_NEXT_PREDS: self.forward_target({Columns.OBS: batch[Columns.NEXT_OBS]})[
                QF_PREDS
            ],
        }

    def compute_q_values(self, batch: dict[str, Any]) -> dict[str, Any]:
        """{QF_PREDS: (B, n_agents, n_actions)}, -inf where an action is unavailable."""
        return {QF_PREDS: self._agent_qs(self.agent_q, batch[Columns.OBS])}

    def forward_target(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {QF_PREDS: self._agent_qs(self._target_agent_q, batch[Columns.OBS])}

    def mix(self, agent_qs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """(B, n_agents) chosen Q values -> (B,) Q_tot with the online mixer."""
        return self.mixer(agent_qs, state)

    def mix_target(self, agent_qs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """(B, n_agents) chosen Q values -> (B,) Q_tot with the target mixer."""
        return self._target_mixer(agent_qs, state)

    def make_target_networks(self) -> None:
        self._target_agent_q = make_target_network(self.agent_q)
        self._target_mixer = make_target_network(self.mixer)

    def get_target_network_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        return [(self.agent_q, self._target_agent_q), (self.mixer, self._target_mixer)]

    def get_non_inference_attributes(self) -> list[str]:
        extra = ["reward_stats"] if self.reward_stats is not None else []
        return ["mixer", "_target_agent_q", "_target_mixer", *extra]

    def _agent_qs(self, network: nn.Module, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        agent_obs = obs["obs"]
        ids = self.agent_ids.expand(*agent_obs.shape[:-1], self.n_agents)
        q = network(torch.cat([agent_obs, ids], dim=-1))
        return q.masked_fill(obs[MASK] <= 0, float("-inf"))


def epsilon_greedy(q: torch.Tensor, mask: torch.Tensor, epsilon: float) -> torch.Tensor:
    """(B, n_agents) actions: each agent on its own takes a uniformly random available
    action with probability epsilon, else its greedy action (PyMARL's per-agent scheme)."""
    greedy = q.argmax(dim=-1)
    available = (mask > 0).float().reshape(-1, mask.shape[-1])
    random = torch.multinomial(available, num_samples=1).view(greedy.shape)
    explore = torch.rand(greedy.shape, device=q.device) < epsilon
    return torch.where(explore, random, greedy)
