"""MADDPG and MASAC (rlsuite.multiagent.maddpg): what the critics and actors see, and the
joint env. The learners: tests/test_maddpg_learner.py; bad input:
tests/test_maddpg_bad_input.py; the experiments' smoke runs: tests/test_experiments.py."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite.multiagent.maddpg import JointEnv, MADDPGConfig, MASACConfig
from rlsuite.multiagent.maddpg.joint_env import AGENT_REWARDS, JOINT_OF, OBS
from rlsuite.multiagent.maddpg.networks import critic_inputs, with_own_actions

N_AGENTS, OBS_DIM, ACTION_DIM, BATCH = 3, 4, 2, 8
POLICIES = ("hunter", "hunter", "prey")  # two agents share a policy, one has its own


def _spaces(discrete: bool = False) -> tuple[gym.Space, gym.Space]:
    obs = gym.spaces.Dict(
        {
            OBS: gym.spaces.Box(-np.inf, np.inf, (N_AGENTS, OBS_DIM), np.float32),
            AGENT_REWARDS: gym.spaces.Box(-np.inf, np.inf, (N_AGENTS,), np.float32),
        }
    )
    if discrete:
        return obs, gym.spaces.MultiDiscrete([ACTION_DIM] * N_AGENTS)
    return obs, gym.spaces.Box(-1.0, 1.0, (N_AGENTS, ACTION_DIM), np.float32)


def _config(config_class: type = MADDPGConfig) -> Any:
    config = config_class().training(agent_policies=POLICIES, tau=0.1)
    return config.rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))


def _module(config_class: type = MADDPGConfig, discrete: bool = False, **kwargs: Any) -> Any:
    spec = _config(config_class).get_default_rl_module_spec()
    spec.observation_space, spec.action_space = _spaces(discrete)
    for key, value in kwargs.items():
        setattr(spec, key, value)
    module = spec.build()
    if not module.inference_only:
        module.make_target_networks()
    return module


def _batch(discrete: bool = False) -> dict[str, Any]:
    def observations() -> dict[str, torch.Tensor]:
        return {
            OBS: torch.randn(BATCH, N_AGENTS, OBS_DIM),
            AGENT_REWARDS: torch.randn(BATCH, N_AGENTS),
        }

    actions = (
        torch.randint(0, ACTION_DIM, (BATCH, N_AGENTS))
        if discrete
        else torch.rand(BATCH, N_AGENTS, ACTION_DIM) * 2 - 1
    )
    return {
        Columns.OBS: observations(),
        Columns.NEXT_OBS: observations(),
        Columns.ACTIONS: actions,
        Columns.TERMINATEDS: torch.tensor([True, False] * (BATCH // 2)),
        "weights": torch.ones(BATCH),
    }


# --- what the critics see --------------------------------------------------------------


def test_critic_input_holds_every_agents_observation_and_action_in_agent_order() -> None:
    obs = torch.arange(N_AGENTS * OBS_DIM, dtype=torch.float32).view(1, N_AGENTS, OBS_DIM)
    actions = -torch.arange(1, 1 + N_AGENTS * ACTION_DIM, dtype=torch.float32).view(
        1, N_AGENTS, ACTION_DIM
    )
    inputs = critic_inputs(obs, actions)
    assert inputs.shape == (1, N_AGENTS, N_AGENTS * (OBS_DIM + ACTION_DIM + 1))
    for agent in range(N_AGENTS):
        row = inputs[0, agent]
        expected_ids = torch.nn.functional.one_hot(torch.tensor(agent), N_AGENTS).float()
        torch.testing.assert_close(row[: N_AGENTS * OBS_DIM], obs.reshape(-1))
        torch.testing.assert_close(
            row[N_AGENTS * OBS_DIM : N_AGENTS * (OBS_DIM + ACTION_DIM)], actions.reshape(-1)
        )
        torch.testing.assert_close(row[N_AGENTS * (OBS_DIM + ACTION_DIM) :], expected_ids)


def test_actor_update_replaces_only_the_agents_own_action() -> None:
    buffer_actions = torch.zeros(BATCH, N_AGENTS, ACTION_DIM)
    own = torch.ones(BATCH, N_AGENTS, ACTION_DIM)
    joint = with_own_actions(buffer_actions, own)
    for agent in range(N_AGENTS):
        for other in range(N_AGENTS):
            expected = 1.0 if agent == other else 0.0
            assert (joint[:, agent, other] == expected).all()


@pytest.mark.parametrize("config_class", [MADDPGConfig, MASACConfig])
def test_every_critic_depends_on_every_agents_observation_and_action(config_class: type) -> None:
    torch.manual_seed(0)
    module = _module(config_class)
    for agent in range(N_AGENTS):
        for moved in _critics_moved_by(module, agent):
            # Every agent's critic (not only the moved agent's) sees the change.
            assert moved.all()


def _critics_moved_by(module: Any, agent: int) -> list[torch.Tensor]:
    """(B, n_agents) booleans, each critic's value changed or not, when `agent`'s
    observation moves and when its action does."""
    batch = _batch()
    obs, actions = batch[Columns.OBS][OBS], batch[Columns.ACTIONS]
    base = module.q_values(module.critics, obs, actions)
    assert base.shape == (BATCH, N_AGENTS)
    moved_obs, moved_actions = obs.clone(), actions.clone()
    moved_obs[:, agent] += 1.0
    moved_actions[:, agent] *= -1.0
    return [
        (module.q_values(module.critics, moved_obs, actions) - base).abs() > 0,
        (module.q_values(module.critics, obs, moved_actions) - base).abs() > 0,
    ]


@pytest.mark.parametrize("config_class", [MADDPGConfig, MASACConfig])
def test_a_local_critic_sees_only_its_own_agent(config_class: type) -> None:
    """local_critics=("prey",): the prey's critic is independent DDPG's (SAC's), Q(o, a)
    of its own agent; the hunters' critics still see every agent."""
    torch.manual_seed(0)
    spec = _config(config_class).training(local_critics=["prey"]).get_default_rl_module_spec()
    spec.observation_space, spec.action_space = _spaces()
    module = spec.build()
    prey = POLICIES.index("prey")
    hunters = [i for i, p in enumerate(POLICIES) if p != "prey"]
    for agent in range(N_AGENTS):
        for moved in _critics_moved_by(module, agent):
            if agent == prey:
                assert moved[:, prey].all()
            else:
                assert not moved[:, prey].any()
            assert moved[:, hunters].all()


# --- what the actors see ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("config_class", "discrete"),
    [(MADDPGConfig, False), (MADDPGConfig, True), (MASACConfig, False)],
)
def test_actor_acts_on_its_own_observation_only(config_class: type, discrete: bool) -> None:
    torch.manual_seed(0)
    module = _module(config_class, discrete, inference_only=True)
    assert not hasattr(module, "critics")  # env runners hold the actors alone
    obs = torch.randn(64, N_AGENTS, OBS_DIM)
    outputs = module.actor_outputs(module.actors, obs)
    for agent in range(N_AGENTS):
        moved = obs.clone()
        moved[:, agent] = torch.randn(64, OBS_DIM) * 5
        changed = module.actor_outputs(module.actors, moved)
        for other in range(N_AGENTS):
            same = torch.equal(changed[:, other], outputs[:, other])
            assert same == (other != agent), (agent, other)
    actions = module.forward_inference({Columns.OBS: {OBS: obs}})[Columns.ACTIONS]
    explored = module.forward_exploration({Columns.OBS: {OBS: obs}})[Columns.ACTIONS]
    space = _spaces(discrete)[1]
    for batch_actions in (actions, explored):
        assert all(space.contains(a.detach().numpy().astype(space.dtype)) for a in batch_actions)


def test_agents_of_one_policy_share_its_actor_and_critic() -> None:
    module = _module()
    assert list(module.actors) == ["hunter", "prey"]
    assert list(module.critics) == ["hunter", "prey"]
    obs = torch.randn(BATCH, 1, OBS_DIM).expand(-1, N_AGENTS, -1)
    outputs = module.actor_outputs(module.actors, obs)
    torch.testing.assert_close(outputs[:, 0], outputs[:, 1])  # both hunters: one network
    assert not torch.allclose(outputs[:, 0], outputs[:, 2])


def test_discrete_actor_updates_through_gumbel_softmax_one_hots() -> None:
    torch.manual_seed(0)
    module = _module(discrete=True)
    obs = torch.randn(BATCH, N_AGENTS, OBS_DIM)
    actions = module.policy_actions(module.actors, obs)
    assert actions.shape == (BATCH, N_AGENTS, ACTION_DIM)
    assert ((actions == 0) | (actions == 1)).all() and (actions.sum(-1) == 1).all()
    actions.sum().backward()  # straight-through: gradients reach the actors
    grads = [p.grad for p in module.actors.parameters()]
    assert all(g is not None for g in grads) and any(g.abs().sum() > 0 for g in grads)


def test_joint_env_keeps_each_agents_reward() -> None:
    from rlsuite import envs

    inner = envs.make("mpe/simple_spread", {"continuous_actions": True})
    env = JointEnv({JOINT_OF: "mpe/simple_spread", "continuous_actions": True})
    assert env.action_space.shape == (3, 5) and env.spec_joint.agents == tuple(
        inner.possible_agents
    )
    obs, _ = env.reset(seed=0)
    inner_obs, _ = inner.reset(seed=0)
    for i, agent in enumerate(env.spec_joint.agents):
        np.testing.assert_allclose(obs[OBS][i], inner_obs[agent])  # the env's agent order
    action = env.action_space.sample()
    obs, reward, _, _, _ = env.step(action)
    _, inner_rewards, _, _, _ = inner.step(
        {a: action[i] for i, a in enumerate(inner.possible_agents)}
    )
    np.testing.assert_allclose(
        obs[AGENT_REWARDS], [inner_rewards[a] for a in inner.possible_agents]
    )
    assert reward == pytest.approx(float(obs[AGENT_REWARDS].sum()))
    env.close()
    inner.close()
