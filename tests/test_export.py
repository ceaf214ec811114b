"""Exported ONNX and TorchScript policies act like the RLModule they came from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns

from rlsuite import envs
from rlsuite.evaluation.locate import locate
from rlsuite.evaluation.policy import SingleAgentPolicy
from rlsuite.rl import export


@pytest.fixture(scope="module")
def policy(cartpole_run: Path) -> SingleAgentPolicy:
    return SingleAgentPolicy.from_checkpoint(locate(cartpole_run).checkpoint)


def env_observations(count: int) -> np.ndarray:
    """Observations CartPole really produces, from random play."""
    env = envs.make("classic/cartpole")
    env.action_space.seed(0)
    observation, _ = env.reset(seed=0)
    observations = []
    for _ in range(count):
        observations.append(observation)
        observation, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            observation, _ = env.reset()
    return np.stack(observations).astype(np.float32)


def rlmodule_actions(policy: SingleAgentPolicy, observations: np.ndarray) -> np.ndarray:
    """Greedy actions the way RLlib's env runner gets them: forward_inference, then the
    module-to-env connectors (GetActions with explore=False)."""
    with torch.no_grad():
        output = policy.module.forward_inference({Columns.OBS: torch.as_tensor(observations)})
    logits = output[Columns.ACTION_DIST_INPUTS]
    dist = policy.module.get_inference_action_dist_cls().from_logits(logits)
    return dist.to_deterministic().sample().numpy()


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_export_gives_the_rlmodule_actions(
    policy: SingleAgentPolicy, fmt: export.Format, tmp_path: Path
) -> None:
    observations = env_observations(512)
    path = export.export(policy.module, fmt, tmp_path, "default_policy", observations)
    assert path.stat().st_size > 1000
    expected = rlmodule_actions(policy, observations)
    got, logits = export.exported_outputs(path, observations)  # a batch of 512, traced at 4
    assert got.shape == expected.shape == (512,)
    np.testing.assert_array_equal(got, expected)
    # The logits behind the actions match too, and differ between observations: the
    # comparison is of a real network, whatever action a two-iteration policy prefers.
    with torch.no_grad():
        output = policy.module.forward_inference({Columns.OBS: torch.as_tensor(observations)})
    module_logits = output[Columns.ACTION_DIST_INPUTS].numpy()
    np.testing.assert_allclose(logits, module_logits, rtol=1e-4, atol=1e-5)
    assert np.ptp(module_logits[:, 1] - module_logits[:, 0]) > 0


def test_export_matches_the_connector_path(policy: SingleAgentPolicy, tmp_path: Path) -> None:
    """The exported action equals what the restored connectors send to the env."""
    path = export.export(policy.module, "onnx", tmp_path, "default_policy", env_observations(8))
    env = envs.make("classic/cartpole")
    episode = policy.new_episode(env)
    observation, info = env.reset(seed=3)
    episode.add_env_reset(observation=observation, infos=info)
    for _ in range(20):
        action, action_for_env, extra = policy.act(episode, explore=False)
        exported = export.exported_actions(
            path, np.asarray([episode.get_observations(-1)], np.float32)
        )
        assert int(exported[0]) == int(action_for_env)
        observation, reward, terminated, truncated, info = env.step(action_for_env)
        episode.add_env_step(
            observation=observation,
            action=action,
            reward=reward,
            infos=info,
            terminated=terminated,
            truncated=truncated,
            extra_model_outputs=extra,
        )
        if episode.is_done:
            break
