"""QMIX/VDN's `standardize_rewards` (EPyMARL's standardise_rewards): the running statistics,
the TD targets on standardized rewards, and the statistics kept through a checkpoint while
env runners never hold them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.examples.envs.classes.multi_agent.two_step_game import TwoStepGame

from rlsuite.multiagent.qmix import QMIXConfig, grouped
from rlsuite.multiagent.qmix.learner import td_targets
from rlsuite.multiagent.qmix.reward_stats import RunningRewardStats
from tests.test_qmix import _module, _observations, _two_step_config


def test_running_stats_equal_the_moments_of_every_reward_seen() -> None:
    rng = np.random.default_rng(0)
    batches = [rng.normal(-2.0, 3.0, size) for size in (256, 7, 1, 512)]
    stats = RunningRewardStats(epsilon=0.0)
    for batch in batches:
        stats.update(torch.as_tensor(batch, dtype=torch.float32))
    seen = np.concatenate(batches)
    np.testing.assert_allclose(float(stats.mean), seen.mean(), rtol=1e-6)
    np.testing.assert_allclose(float(stats.var), seen.var(), rtol=1e-5)
    assert float(stats.count) == len(seen)
    standardized = stats.standardize(torch.as_tensor(seen, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(standardized.mean(), 0.0, atol=1e-5)
    np.testing.assert_allclose(standardized.std(), 1.0, rtol=1e-4)


def test_targets_take_the_standardized_rewards_in_place_of_the_batch_ones() -> None:
    torch.manual_seed(0)
    module = _module()
    batch = {
        Columns.OBS: _observations(8),
        Columns.NEXT_OBS: _observations(8),
        Columns.ACTIONS: torch.randint(0, 4, (8, 3)),
        Columns.REWARDS: torch.full((8,), -2.0),
        Columns.TERMINATEDS: torch.tensor([True] * 8),  # target = reward alone
    }
    fwd = module.forward_train(batch)
    raw = td_targets(module, batch, fwd, gamma=0.99)
    torch.testing.assert_close(raw, batch[Columns.REWARDS])
    replaced = td_targets(module, batch, fwd, gamma=0.99, rewards=torch.full((8,), 0.5))
    torch.testing.assert_close(replaced, torch.full((8,), 0.5))


def _build(config: QMIXConfig):
    import ray

    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    return config.build_algo()


def _learner_module(algo):
    return algo.learner_group._learner.module[DEFAULT_MODULE_ID]


@pytest.fixture
def ray_session():
    import ray

    yield
    ray.shutdown()


def test_statistics_learn_checkpoint_and_stay_off_the_env_runners(
    tmp_path: Path, ray_session: None
) -> None:
    config = _two_step_config("qmix").training(standardize_rewards=True)
    algo = _build(config)
    try:
        algo.train()
        stats = _learner_module(algo).reward_stats
        # Every replayed reward of the two-step game is 0 or one of the payoffs (up to 8).
        assert float(stats.count) >= 64 and 0.0 < float(stats.mean) < 8.0
        assert not hasattr(algo.get_module(), "reward_stats")  # the runner's inference copy
        checkpoint = algo.save_to_path(str(tmp_path / "checkpoint"))
        saved = (float(stats.count), float(stats.mean), float(stats.var))
    finally:
        algo.stop()
    restored = config.algo_class.from_checkpoint(checkpoint)
    try:
        back = _learner_module(restored).reward_stats
        assert (float(back.count), float(back.mean), float(back.var)) == saved
    finally:
        restored.stop()


def test_without_the_option_the_module_has_no_statistics() -> None:
    module = _module()
    assert module.reward_stats is None
    assert not any("reward_stats" in key for key in module.state_dict())


def test_grouped_two_step_game_config_names_the_option() -> None:
    config = QMIXConfig().environment(**grouped(TwoStepGame)).training(standardize_rewards=True)
    assert config.model_config["standardize_rewards"] is True
