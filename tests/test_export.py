"""Exported ONNX and TorchScript policies act like the RLModule they came from (DQN's Q
network included), and `rlsuite.evaluate --export` refuses what cannot export and fails
when an export acts otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.algorithms.dqn import DQNConfig
from ray.rllib.algorithms.dqn.default_dqn_rl_module import QF_PREDS
from ray.rllib.algorithms.dqn.torch.default_dqn_torch_rl_module import DefaultDQNTorchRLModule
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule

from rlsuite import envs
from rlsuite.errors import UsageError
from rlsuite.evaluate import main as evaluate_main
from rlsuite.evaluation.locate import MODULES_DIR, locate
from rlsuite.evaluation.policy import SingleAgentPolicy
from rlsuite.multiagent.maddpg import MADDPGConfig
from rlsuite.multiagent.maddpg.joint_env import AGENT_REWARDS, OBS
from rlsuite.multiagent.qmix import QMIXConfig
from rlsuite.rl import export
from rlsuite.rl.frames import ScaledFramesDQNModule
from tests.test_evaluate_damaged import assert_refused

CARTPOLE_SPACES: tuple[gym.Space, gym.Space] = (
    gym.spaces.Box(-np.inf, np.inf, (4,), np.float32),
    gym.spaces.Discrete(2),
)
FRAME_SPACES: tuple[gym.Space, gym.Space] = (
    gym.spaces.Box(0, 255, (84, 84, 4), np.uint8),
    gym.spaces.Discrete(6),
)
TINY_CNN = {"conv_filters": [[4, 8, 4], [8, 4, 2]]}  # tests/test_frames.py's


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


def dqn_module(module_class: type, spaces: tuple[gym.Space, gym.Space], **model: Any) -> RLModule:
    """The untrained module DQNConfig builds, with dueling heads and double Q as
    dqn_cartpole.py and dqn_atari.py train it."""
    config = DQNConfig().training(dueling=True, double_q=True)
    config.rl_module(
        rl_module_spec=RLModuleSpec(module_class=module_class),
        model_config=DefaultModelConfig(head_fcnet_hiddens=[16], **model),
    )
    module: Any = config.get_rl_module_spec(spaces={DEFAULT_MODULE_ID: spaces}).build()
    module.eval()
    torch.manual_seed(0)
    with torch.no_grad():  # RLlib's small initial heads prefer one action everywhere
        for parameter in module.parameters():
            parameter.normal_(0.0, 0.5)
    return module


@pytest.mark.parametrize("fmt", export.FORMATS)
@pytest.mark.parametrize(
    "module",
    [
        pytest.param(lambda: dqn_module(DefaultDQNTorchRLModule, CARTPOLE_SPACES), id="mlp"),
        pytest.param(
            lambda: dqn_module(ScaledFramesDQNModule, FRAME_SPACES, **TINY_CNN), id="uint8-cnn"
        ),
    ],
)
def test_dqn_export_gives_forward_inference_actions_and_q_values(
    module: Any, fmt: export.Format, tmp_path: Path
) -> None:
    """DQN's forward_inference gives only actions (the argmax of its Q values): the export
    gives the same actions, with the Q values as the distribution inputs."""
    dqn = module()
    observations = export.sample_observations(dqn, 64, seed=0)
    export.check_exportable(dqn)
    path = export.export(dqn, fmt, tmp_path, "default_policy", observations)
    got, q_values = export.exported_outputs(path, observations)
    batch = {Columns.OBS: torch.as_tensor(observations)}
    with torch.no_grad():
        expected = dqn.forward_inference(batch)[Columns.ACTIONS].numpy()
        module_q = dqn.compute_q_values(batch)[QF_PREDS].numpy()
    assert set(dqn.forward_inference(batch)) == {Columns.ACTIONS}  # what the export handles
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(q_values, module_q, rtol=1e-4, atol=1e-5)
    assert len(np.unique(expected)) > 1  # the Q network prefers different actions
    assert export.matches(dqn, path, observations)


def test_dqn_checkpoint_exports_from_the_command_line(
    checkpoint_with: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trial = checkpoint_with(dqn_module(DefaultDQNTorchRLModule, CARTPOLE_SPACES))
    out = tmp_path / "exported"
    code = evaluate_main([str(trial), "--export", "onnx", str(out), "--episodes", "0"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "same actions as the RLModule on 256 observations" in printed, printed
    assert (out / "default_policy.onnx").is_file()


def team_module(kind: str) -> RLModule:
    """An untrained MADDPG or QMIX team module: one RLModule, Dict observations."""
    n_agents, obs_dim, n_actions = 3, 4, 5
    rows = gym.spaces.Box(-np.inf, np.inf, (n_agents, obs_dim), np.float32)
    actions = gym.spaces.MultiDiscrete([n_actions] * n_agents)
    config: Any
    if kind == "maddpg":
        config = MADDPGConfig().training(agent_policies=("hunter", "hunter", "prey"))
        rewards = gym.spaces.Box(-np.inf, np.inf, (n_agents,), np.float32)
        obs = gym.spaces.Dict({OBS: rows, AGENT_REWARDS: rewards})
    else:
        config = QMIXConfig().training(mixing_embed_dim=8, hypernet_embed_dim=16)
        state = gym.spaces.Box(-np.inf, np.inf, (7,), np.float32)
        mask = gym.spaces.Box(0.0, 1.0, (n_agents, n_actions), np.float32)
        obs = gym.spaces.Dict({"obs": rows, "state": state, "action_mask": mask})
    config.rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
    spec = config.get_default_rl_module_spec()
    spec.observation_space, spec.action_space = obs, actions
    return spec.build()


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("maddpg", "holds a MADDPG/MASAC team (its policies hunter, prey in one RLModule"),
        ("qmix", "the policy's observations are a Dict space, not one array (Box)"),
    ],
    ids=["maddpg", "qmix"],
)
def test_team_checkpoints_are_refused_before_anything_is_written(
    checkpoint_with: Any,
    kind: str,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """MADDPG/MASAC (a JointPolicy) and QMIX/VDN teams act on Dict observations, which the
    one-tensor network cannot take: one line, exit 2."""
    trial = checkpoint_with(team_module(kind))
    out = tmp_path / "exported"
    args = [trial, "--export", "torchscript", out, "--episodes", "0"]
    line = assert_refused(capsys, tmp_path, args, message, "evaluate it without --export")
    assert not out.exists(), line


class ArgmaxModule(TorchRLModule):
    """Actions from forward_inference, neither distribution inputs nor Q values."""

    def setup(self) -> None:
        self.net = torch.nn.Linear(4, 2)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTIONS: self.net(batch[Columns.OBS]).argmax(-1)}


def test_modules_that_cannot_export_are_refused() -> None:
    observation_space, action_space = CARTPOLE_SPACES
    actions_only = ArgmaxModule(observation_space=observation_space, action_space=action_space)
    with pytest.raises(UsageError, match="gives actions without the distribution inputs"):
        export.check_exportable(actions_only)
    with pytest.raises(UsageError, match="not one array"):
        export.check_exportable(team_module("qmix"))


def test_actions_that_differ_fail_the_command_and_keep_the_file(
    checkpoint_with: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An export that acts otherwise than its RLModule (here: its actions flipped) is a
    failed check: the error propagates, so `python -m rlsuite.evaluate` exits 1 with its
    traceback, as for a bug in the suite; the file stays to inspect."""
    trial = checkpoint_with(None)  # the trained PPO module
    real = export.exported_actions
    monkeypatch.setattr(export, "exported_actions", lambda path, obs: 1 - real(path, obs))
    out = tmp_path / "exported"
    code = evaluate_main([str(trial), "--export", "onnx", str(out), "--episodes", "0"])
    captured = capsys.readouterr()
    printed = captured.out
    assert code == 1
    assert "kept to inspect" in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1, captured.err
    assert "ACTIONS DIFFER from the RLModule on 256 of 256 observations" in printed, printed
    assert (out / "default_policy.onnx").is_file()


@pytest.fixture
def checkpoint_with(cartpole_run: Path, tmp_path: Path) -> Any:
    """A function: a copy of conftest's smoke PPO CartPole trial whose latest checkpoint
    holds `module` (None: the trained one) as its `default_policy`, where a run of that
    module's algorithm saves it; the env runner's connectors stay the run's defaults."""

    def copy_holding(module: RLModule | None) -> Path:
        trial = locate(cartpole_run).checkpoint.parent
        copy = tmp_path / "results" / "cartpole" / trial.name
        shutil.copytree(trial, copy)
        checkpoint = locate(copy).checkpoint
        if module is None:
            return copy
        shutil.rmtree(checkpoint / MODULES_DIR / DEFAULT_MODULE_ID)
        module.save_to_path(checkpoint / MODULES_DIR / DEFAULT_MODULE_ID)
        return copy

    return copy_holding
