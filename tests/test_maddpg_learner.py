"""MADDPG's and MASAC's learners (rlsuite.multiagent.maddpg.learner): target updates
follow tau, each optimizer takes its own loss's gradients, and the actor output penalty."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME

from rlsuite.multiagent.maddpg import JointEnv, MADDPGConfig, MASACConfig
from rlsuite.multiagent.maddpg.joint_env import AGENT_REWARDS, JOINT_OF, OBS
from rlsuite.multiagent.maddpg.learner import ACTOR, CRITIC
from rlsuite.multiagent.maddpg.module import ACTOR_OUTPUTS, Q_BUFFER, Q_OWN

BATCH = 8


def _learner(config_class: type = MADDPGConfig, num_learners: int = 0) -> Any:
    env = JointEnv({JOINT_OF: "mpe/simple_spread", "continuous_actions": True})
    config = (
        config_class()
        .learners(num_learners=num_learners)  # above 1: a torch process group must exist
        .training(tau=0.1)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
    )
    return config.build_learner(env=env), env


def _learner_and_spread_batch(
    config_class: type, num_learners: int = 0
) -> tuple[Any, JointEnv, dict[str, Any]]:
    """`_learner` and a random batch of its 3-agent simple_spread shapes."""
    torch.manual_seed(0)
    learner, env = _learner(config_class, num_learners)
    obs = {OBS: torch.randn(BATCH, 3, 18), AGENT_REWARDS: torch.randn(BATCH, 3)}
    batch = {
        Columns.OBS: obs,
        Columns.NEXT_OBS: obs,
        Columns.ACTIONS: torch.rand(BATCH, 3, 5) * 2 - 1,
        Columns.TERMINATEDS: torch.tensor([True, False] * (BATCH // 2)),
        "weights": torch.ones(BATCH),
    }
    return learner, env, batch


@pytest.mark.parametrize("config_class", [MADDPGConfig, MASACConfig])
def test_target_update_follows_tau(config_class: type) -> None:
    learner, env = _learner(config_class)
    module = learner.module["default_policy"].unwrapped()
    pairs = module.get_target_network_pairs()
    assert pairs  # MADDPG: actors and critics; MASAC: both critics
    with torch.no_grad():
        for main, _ in pairs:
            for parameter in main.parameters():
                parameter.add_(1.0)  # main and target differ from here on
    before = [[p.clone() for p in target.parameters()] for _, target in pairs]
    learner.after_gradient_based_update(timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: 1})
    for (main, target), old in zip(pairs, before, strict=True):
        for m, t, o in zip(main.parameters(), target.parameters(), old, strict=True):
            torch.testing.assert_close(t, 0.1 * m + 0.9 * o)
    env.close()


def critic_loss_and_learner_gradients(
    learner: Any, batch: dict[str, Any], module_id: str = "default_policy"
) -> tuple[Any, dict[str, Any], tuple[torch.Tensor, ...], dict[int, torch.Tensor]]:
    """One forward pass and loss of `module_id` on `batch`: the module, its forward output,
    the critics' gradients of the TD loss alone, and the learner's gradients by parameter
    (`id`), as `compute_gradients` gives them (test_maddpg_learners.py's workers too)."""
    module = learner.module[module_id].unwrapped()
    fwd = module.forward_train(batch)
    config = learner.config.get_config_for_module(module_id)
    loss = learner.compute_loss_for_module(
        module_id=module_id, config=config, batch=batch, fwd_out=fwd
    )
    critic_loss = learner._temp_losses[(module_id, CRITIC)]
    local = torch.autograd.grad(critic_loss, list(module.critics.parameters()), retain_graph=True)
    grads = learner.compute_gradients({module_id: loss})
    return module, fwd, local, {id(learner._params[ref]): grad for ref, grad in grads.items()}


@pytest.mark.parametrize("config_class", [MADDPGConfig, MASACConfig])
def test_actor_loss_never_moves_the_critic(config_class: type) -> None:
    """Each optimizer gets the gradients of its own loss alone: the critics those of the TD
    loss, though the actor loss runs through them."""
    learner, env, batch = _learner_and_spread_batch(config_class)
    module_id = "default_policy"
    module, fwd, expected, by_param = critic_loss_and_learner_gradients(learner, batch)
    critic_params = list(module.critics.parameters())
    for parameter, grad in zip(critic_params, expected, strict=True):
        torch.testing.assert_close(by_param[id(parameter)], grad)
    actor_grads = [by_param[id(p)] for p in module.actors.parameters()]
    assert any(g.abs().sum() > 0 for g in actor_grads)  # the actors do learn
    assert fwd[Q_BUFFER].shape == fwd[Q_OWN].shape == (BATCH, 3)
    assert ACTOR in {name for name, _ in learner.get_optimizers_for_module(module_id)}
    env.close()


@pytest.mark.parametrize("config_class", [MADDPGConfig, MASACConfig])
def test_actor_output_reg_adds_the_mean_squared_actor_output_to_the_actor_loss(
    config_class: type,
) -> None:
    """openai/maddpg's `p_reg`: weight x mean of the actors' squared raw outputs."""
    learner, env, batch = _learner_and_spread_batch(config_class)
    module_id = "default_policy"
    module = learner.module[module_id].unwrapped()
    fwd = module.forward_train(batch)
    own_outputs = module.action_part(module.actor_outputs(module.actors, batch[Columns.OBS][OBS]))
    torch.testing.assert_close(fwd[ACTOR_OUTPUTS], own_outputs)
    assert own_outputs.shape[-1] == module.action_dim  # MASAC: its means, not its log stds
    actor_losses = []
    for weight in (0.0, 1e-3):
        config = learner.config.copy(copy_frozen=False).training(actor_output_reg=weight)
        learner.compute_loss_for_module(
            module_id=module_id, config=config, batch=batch, fwd_out=fwd
        )
        actor_losses.append(learner._temp_losses[(module_id, ACTOR)])
        learner._temp_losses.clear()
    penalty = 1e-3 * fwd[ACTOR_OUTPUTS].pow(2).mean()
    assert penalty > 0
    torch.testing.assert_close(actor_losses[1] - actor_losses[0], penalty)
    env.close()
