"""MADDPG's and MASAC's losses, in subclasses of RLlib's DQN torch learner.

From `DQNTorchLearner` they keep building the target networks (the module's
`TargetNetworkAPI`), Polyak-averaging them after each update (`tau`, every
`target_network_update_freq` env steps), and the TD errors for prioritized replay. Per
agent i, with r_i its own reward (`JointEnv` carries it in the next observation):

    MADDPG  critic: (Q_i(x, a) - [r_i + gamma (1 - done) Q'_i(x', mu'(o')))])^2
            actor:  -Q_i(x, a_1, ..., mu_i(o_i), ..., a_n)
    MASAC   critics: both twins to r_i + gamma (1 - done) (min Q'_i(x', a') - alpha_i log pi(a'_i))
            actor:   alpha_i log pi(a_i | o_i) - min Q_i(x, a_1, ..., a_i ~ pi_i, ..., a_n)
            alpha:   -log alpha_i (log pi(a_i | o_i) + target entropy)

Each loss trains only its own networks (one optimizer each, as RLlib's SAC learner has):
`compute_gradients` takes every optimizer's gradients of its own loss alone, so the actor
loss, which runs through the critic, never moves the critic.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from ray.rllib.algorithms.dqn.torch.dqn_torch_learner import DQNTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.learner import POLICY_LOSS_KEY
from ray.rllib.utils.metrics import ALL_MODULES, TD_ERROR_KEY

from rlsuite.multiagent.maddpg.joint_env import AGENT_REWARDS
from rlsuite.multiagent.maddpg.masac_module import LOGP_OWN, Q_NEXT_SOFT, Q_TWIN_BUFFER
from rlsuite.multiagent.maddpg.module import ACTOR_OUTPUTS, Q_BUFFER, Q_OWN, Q_TARGET_NEXT

CRITIC = "qf"  # optimizer names, as RLlib's SAC learner calls them
ACTOR = "policy"
TEMPERATURE = "alpha"
QF_LOSS_KEY = "qf_loss"
ALPHA_LOSS_KEY = "alpha_loss"


class MADDPGTorchLearner(DQNTorchLearner):
    """Centralized critics' TD loss and deterministic policy gradients, per agent."""

    def build(self) -> None:
        super().build()
        # Loss tensors by (module, optimizer), from the loss to `compute_gradients`.
        self._temp_losses: dict[tuple[str, str], torch.Tensor] = {}

    def configure_optimizers_for_module(self, module_id: str, config: Any = None) -> None:
        module: Any = self.module[module_id].unwrapped()
        self._register(module_id, CRITIC, self.critic_parameters(module), config.critic_lr)
        self._register(module_id, ACTOR, list(module.actors.parameters()), config.actor_lr)

    def critic_parameters(self, module: Any) -> list[torch.nn.Parameter]:
        return list(module.critics.parameters())

    def _register(self, module_id: str, name: str, params: list, lr: Any) -> None:
        # eps=1e-7 as RLlib's SAC learner sets it. fused: Adam's default on the CPU steps
        # tensor by tensor in Python, 7.5% of masac_multiwalker's trial time (py-spy); the
        # fused kernel is the same update in one call per step (docs/multiagent.md).
        optimizer = torch.optim.Adam(params, eps=1e-7, fused=True)
        self.register_optimizer(
            module_id=module_id,
            optimizer_name=name,
            optimizer=optimizer,
            params=params,
            lr_or_lr_schedule=lr,
        )

    def compute_loss_for_module(
        self, *, module_id: str, config: Any, batch: dict[str, Any], fwd_out: dict[str, Any]
    ) -> torch.Tensor:
        target = td_targets(batch, fwd_out[Q_TARGET_NEXT], config.gamma)
        q = fwd_out[Q_BUFFER]
        critic_loss = weighted_mse(batch, q, target)
        actor_loss = -fwd_out[Q_OWN].mean() + output_penalty(config, fwd_out)
        self._log(module_id, critic_loss, actor_loss, q, target, fwd_out)
        self._temp_losses[(module_id, CRITIC)] = critic_loss
        self._temp_losses[(module_id, ACTOR)] = actor_loss
        return critic_loss + actor_loss

    def _log(
        self,
        module_id: str,
        critic_loss: torch.Tensor,
        actor_loss: torch.Tensor,
        q: torch.Tensor,
        target: torch.Tensor,
        fwd_out: dict[str, Any],
    ) -> None:
        # One TD error per replayed joint step (mean over agents): priorities for
        # RLlib's prioritized episode buffer, as DQN and SAC log them.
        td_error = torch.abs(q - target).mean(dim=-1)
        self.metrics.log_value((module_id, TD_ERROR_KEY), td_error, reduce="item_series")
        self.metrics.log_dict(
            {
                QF_LOSS_KEY: critic_loss,
                POLICY_LOSS_KEY: actor_loss,
                "qf_mean": q.mean(),
                "td_error_mean": td_error.mean(),
                # Saturated actors (logits far apart) stop exploring and learning: this
                # shows it in TensorBoard.
                "actor_output_abs_mean": fwd_out[ACTOR_OUTPUTS].detach().abs().mean(),
            },
            key=module_id,
            window=1,
        )

    def compute_gradients(self, loss_per_module: dict[str, Any], **kwargs: Any) -> dict[Any, Any]:
        grads: dict[Any, Any] = {}
        # Sorted: every learner of a group must list the gradients in one order (below).
        for module_id in sorted(set(loss_per_module) - {ALL_MODULES}):
            for name, optimizer in self.get_optimizers_for_module(module_id):
                loss = self._temp_losses.pop((module_id, name))
                params = self.filter_param_dict_for_optimizer(self._params, optimizer)
                # autograd.grad, not backward(): gradients of this loss alone, not summed
                # into other networks' .grad (the actor loss runs through the critic).
                values = torch.autograd.grad(
                    loss, list(params.values()), retain_graph=True, allow_unused=True
                )
                for (ref, param), grad in zip(params.items(), values, strict=True):
                    grads[ref] = torch.zeros_like(param) if grad is None else grad
        self._temp_losses.clear()
        if self.config.num_learners > 1:
            average_over_learners(grads)
        return grads


class MASACTorchLearner(MADDPGTorchLearner):
    """Twin critics, stochastic actors and a learned temperature per policy."""

    def configure_optimizers_for_module(self, module_id: str, config: Any = None) -> None:
        super().configure_optimizers_for_module(module_id, config)
        module: Any = self.module[module_id].unwrapped()
        self._register(module_id, TEMPERATURE, list(module.log_alpha.parameters()), config.alpha_lr)

    def critic_parameters(self, module: Any) -> list[torch.nn.Parameter]:
        return [*module.critics.parameters(), *module.twin_critics.parameters()]

    def compute_loss_for_module(
        self, *, module_id: str, config: Any, batch: dict[str, Any], fwd_out: dict[str, Any]
    ) -> torch.Tensor:
        module: Any = self.module[module_id].unwrapped()
        target = td_targets(batch, fwd_out[Q_NEXT_SOFT], config.gamma)
        q = fwd_out[Q_BUFFER]
        critic_loss = weighted_mse(batch, q, target) + weighted_mse(
            batch, fwd_out[Q_TWIN_BUFFER], target
        )
        logp = fwd_out[LOGP_OWN]
        alphas = module.alphas()
        actor_loss = (alphas.detach() * logp - fwd_out[Q_OWN]).mean()
        actor_loss = actor_loss + output_penalty(config, fwd_out)
        log_alphas = alphas.log()
        entropy_gap = logp.detach() + target_entropy(config, module.action_dim)
        alpha_loss = -(log_alphas * entropy_gap).mean()
        self._log(module_id, critic_loss, actor_loss, q, target, fwd_out)
        self.metrics.log_dict(
            {ALPHA_LOSS_KEY: alpha_loss, "alpha_value": alphas.mean(), "logp": logp.mean()},
            key=module_id,
            window=1,
        )
        self._temp_losses[(module_id, CRITIC)] = critic_loss
        self._temp_losses[(module_id, ACTOR)] = actor_loss
        self._temp_losses[(module_id, TEMPERATURE)] = alpha_loss
        return critic_loss + actor_loss + alpha_loss


def average_over_learners(grads: dict[Any, torch.Tensor]) -> None:
    """Replace each gradient with its mean over the learners of a multi-learner group.

    RLlib wraps each module in torch's DistributedDataParallel there, and DDP averages
    gradients only inside `backward()`: `autograd.grad`, which keeps each loss's gradients
    apart, passes by its hooks, so each learner would step on its own share of the batch and
    the learners would drift apart without an error. One all-reduce of all the gradients,
    flattened in the order every learner builds them, does DDP's part."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return
    refs, tensors = list(grads), list(grads.values())
    flat = torch.cat([t.reshape(-1) for t in tensors])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    for ref, tensor, mean in zip(
        refs, tensors, flat.split([t.numel() for t in tensors]), strict=True
    ):
        grads[ref] = mean.view_as(tensor)


def output_penalty(config: Any, fwd_out: dict[str, Any]) -> torch.Tensor | float:
    """`actor_output_reg` times the mean squared actor output: openai/maddpg's `p_reg`
    (1e-3 there), which keeps Gumbel-softmax logits, and tanh's inputs, from running off
    to where the actor's gradient vanishes."""
    weight = float(config.actor_output_reg)
    return weight * fwd_out[ACTOR_OUTPUTS].pow(2).mean() if weight else 0.0


def td_targets(batch: dict[str, Any], next_values: torch.Tensor, gamma: float) -> torch.Tensor:
    """(B, n_agents): r_i + gamma (1 - terminated) next value_i. Each agent's reward of
    the step is in the next observation (`JointEnv`), so n_step must be 1."""
    rewards = batch[Columns.NEXT_OBS][AGENT_REWARDS].float()
    not_terminated = 1.0 - batch[Columns.TERMINATEDS].float().unsqueeze(-1)
    return (rewards + gamma * not_terminated * next_values).detach()


def weighted_mse(batch: dict[str, Any], q: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Squared TD error, weighted per joint step (prioritized replay's importance weights)."""
    weights = batch["weights"].float().unsqueeze(-1) if "weights" in batch else 1.0
    return torch.mean(weights * (q - target) ** 2)


def target_entropy(config: Any, action_dim: int) -> float:
    """SAC's "auto": minus the number of action dimensions (per agent), else the value."""
    value = config.target_entropy
    return -float(action_dim) if value in (None, "auto") else float(value)
