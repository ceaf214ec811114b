"""uint8 Atari frames (env_config frame_dtype="uint8") and the modules that scale them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.algorithms.dqn import DQNConfig
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core import DEFAULT_MODULE_ID, Columns
from ray.rllib.core.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import envs
from rlsuite.rl.frames import ScaledFramesDQNModule, ScaledFramesPPOModule
from tests.helpers import ROOT, assert_rejected, run_main, write

UINT8 = {"frame_dtype": "uint8", "noop_max": 0}
FLOAT = {"noop_max": 0}
TINY_CNN = DefaultModelConfig(conv_filters=[[4, 8, 4], [8, 4, 2]], head_fcnet_hiddens=[8])


def test_standard_and_vector_paths_give_uint8_frames_that_scale_to_the_float_ones() -> None:
    for config in ({}, {"num_envs": 2}):
        uint8_env = envs.make("atari/freeway", {**UINT8, **config})
        float_env = envs.make("atari/freeway", {**FLOAT, **config})
        space = getattr(uint8_env, "single_observation_space", uint8_env.observation_space)
        assert space == gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
        frames, _ = uint8_env.reset(seed=0)
        scaled, _ = float_env.reset(seed=0)
        for _ in range(5):
            assert frames.dtype == np.uint8
            np.testing.assert_array_equal(np.divide(frames, np.float32(255)), scaled)
            action = np.zeros(2, np.int64) if config else 0
            frames, *_ = uint8_env.step(action)
            scaled, *_ = float_env.step(action)


def module(module_class: type, config: AlgorithmConfig) -> Any:
    """The module the config builds for Pong's spaces with uint8 frames."""
    config.rl_module(rl_module_spec=RLModuleSpec(module_class=module_class), model_config=TINY_CNN)
    spaces = {
        DEFAULT_MODULE_ID: (gym.spaces.Box(0, 255, (84, 84, 4), np.uint8), gym.spaces.Discrete(6))
    }
    return config.get_rl_module_spec(spaces=spaces).build()


def test_ppo_module_acts_on_uint8_frames_as_on_the_scaled_floats() -> None:
    ppo = module(ScaledFramesPPOModule, PPOConfig())
    frames = torch.randint(0, 256, (3, 84, 84, 4), dtype=torch.uint8)
    with torch.no_grad():
        from_uint8 = ppo.forward_inference({Columns.OBS: frames})
        from_float = ppo.forward_inference({Columns.OBS: frames.float() / 255})
        values = ppo.compute_values({Columns.OBS: frames})
    torch.testing.assert_close(
        from_uint8[Columns.ACTION_DIST_INPUTS], from_float[Columns.ACTION_DIST_INPUTS]
    )
    assert values.shape == (3,) and values.dtype == torch.float32


def test_dqn_target_network_scales_too() -> None:
    dqn = module(ScaledFramesDQNModule, DQNConfig())
    dqn.make_target_networks()
    frames = torch.randint(0, 256, (2, 84, 84, 4), dtype=torch.uint8)
    with torch.no_grad():
        target = dqn.forward_target({Columns.OBS: frames})
        scaled = dqn.forward_target({Columns.OBS: frames.float() / 255})
    torch.testing.assert_close(target["qf_preds"], scaled["qf_preds"])


def test_rllib_default_module_on_uint8_frames_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        "exp.py",
        '"""uint8 frames into RLlib\'s default CNN."""\n'
        "from ray.rllib.algorithms.ppo import PPOConfig\n"
        "from rlsuite import Experiment\n"
        "config = PPOConfig().environment('atari/pong', env_config={'frame_dtype': 'uint8'})\n"
        "experiment = Experiment(config=config, stop={'training_iteration': 1})\n",
    )
    storage = tmp_path / "results"
    code = run_main(path, storage=storage)
    assert_rejected(capsys, code, storage, "uint8 frames", "rlsuite.rl.frames")


def test_unknown_frame_dtype_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    experiment = ROOT / "experiments" / "ppo_atari.py"
    code = run_main(
        experiment, "--set", "environment.env_config.frame_dtype=uint16", storage=storage
    )
    assert_rejected(capsys, code, storage, "frame_dtype='uint16'", "float32, uint8")
