"""The bf16 PPO Learner: its CNN runs in bf16 where the CPU does that natively, float32
elsewhere; weights stay float32, and PPO still learns with it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite.envs import registry
from rlsuite.launcher.loader import load_experiment
from rlsuite.rl import mixed_precision
from rlsuite.rl.mixed_precision import Bf16PPOTorchLearner
from rlsuite.rl.smoke import smoke_config
from tests.helpers import ROOT, assert_learns, local_ray

needs_bf16_cpu = pytest.mark.skipif(
    not mixed_precision.fast_bf16(torch.device("cpu")), reason="this CPU has no native bf16"
)


def atari_algorithm() -> Algorithm:
    config = smoke_config(load_experiment(ROOT / "experiments/ppo_atari.py").config)
    assert config.learner_class is Bf16PPOTorchLearner
    registry.register(config.env)
    return config.build_algo()


@pytest.fixture
def conv_dtypes() -> Iterator[list[torch.dtype]]:
    """Output dtypes of the learner's first convolution during `train()`."""
    seen: list[torch.dtype] = []
    with local_ray():
        yield seen


def record_first_conv(algo: Algorithm, seen: list[torch.dtype]) -> torch.nn.Module:
    module = algo.learner_group._learner.module[DEFAULT_MODULE_ID]
    conv = next(m for m in module.modules() if isinstance(m, torch.nn.Conv2d))
    conv.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    return module


@needs_bf16_cpu
def test_atari_learner_runs_its_cnn_in_bf16(conv_dtypes: list[torch.dtype]) -> None:
    algo = atari_algorithm()
    try:
        module = record_first_conv(algo, conv_dtypes)
        result = algo.train()
        assert torch.bfloat16 in conv_dtypes
        assert all(p.dtype == torch.float32 for p in module.parameters())
        losses = result["learners"][DEFAULT_MODULE_ID]
        assert torch.isfinite(torch.tensor(float(losses["total_loss"])))
    finally:
        algo.stop()


def test_without_native_bf16_the_learner_stays_float32(
    conv_dtypes: list[torch.dtype], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mixed_precision, "fast_bf16", lambda device: False)
    algo = atari_algorithm()
    try:
        record_first_conv(algo, conv_dtypes)
        algo.train()
        assert conv_dtypes and set(conv_dtypes) == {torch.float32}
    finally:
        algo.stop()


@pytest.mark.slow
@needs_bf16_cpu
def test_ppo_learns_cartpole_with_the_bf16_learner() -> None:
    """Equal learning, not only speed: CartPole to 450 within 300k env steps (float32:
    48k-192k steps over seeds 0-6 with these settings)."""
    config = load_experiment(ROOT / "experiments/ppo_cartpole.py").config.copy(copy_frozen=False)
    config.learners(learner_class=Bf16PPOTorchLearner).debugging(seed=0)
    assert isinstance(config, PPOConfig)
    registry.register(config.env)
    assert_learns(config, target=450, within_env_steps=300_000)
