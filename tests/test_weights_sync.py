"""After a checkpoint is loaded into an Algorithm that has trained, its env runners act
with the restored weights: RLlib's own sync skips them (rlsuite/rl/weights_sync.py), the
callback the launcher adds pushes them. (Tune's PBT restores into a new actor, which RLlib
syncs; the push is a safeguard for restores into a live one.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite.launcher.loader import load_experiment
from rlsuite.launcher.tuner import param_space
from rlsuite.rl.weights_sync import push_weights_after_restore, with_weights_pushed_after_restore
from tests.helpers import ROOT, local_ray


def own_callback(**_: Any) -> None:
    """A user's `on_checkpoint_loaded` callback, which must stay."""


def cartpole(pushed: bool) -> PPOConfig:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=256, minibatch_size=64, num_epochs=1)
        .callbacks(on_checkpoint_loaded=own_callback)
    )
    return with_weights_pushed_after_restore(config) if pushed else config


def runner_acts_with_learner_weights(algorithm: Any) -> bool:
    learner = algorithm.learner_group.get_weights()[DEFAULT_MODULE_ID]
    runner = algorithm.env_runner.module.get_state(inference_only=True)
    assert any(name.startswith("pi.") for name in runner), sorted(runner)
    return all(
        torch.equal(torch.as_tensor(t), torch.as_tensor(learner[n])) for n, t in runner.items()
    )


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    with local_ray():
        yield


@pytest.mark.parametrize("pushed", [True, False])
def test_env_runners_act_with_a_loaded_checkpoint(
    ray_session: None, tmp_path: Path, pushed: bool
) -> None:
    """Train, save, train on, load the saved checkpoint with the Trainable API that
    `Trainable.restore` calls. Unpushed is RLlib's behaviour: if an upgrade fixes it, this case fails and the
    push can go."""
    algorithm = cartpole(pushed).build_algo()
    try:
        algorithm.train()
        algorithm.save_to_path(str(tmp_path))
        saved = algorithm.learner_group.get_weights()[DEFAULT_MODULE_ID]
        algorithm.train()
        assert runner_acts_with_learner_weights(algorithm)  # synced after its update
        algorithm.load_checkpoint(str(tmp_path))
        restored = algorithm.learner_group.get_weights()[DEFAULT_MODULE_ID]
        assert all(
            torch.equal(torch.as_tensor(saved[n]), torch.as_tensor(restored[n])) for n in saved
        )
        assert runner_acts_with_learner_weights(algorithm) is pushed
    finally:
        algorithm.stop()


def test_the_launcher_adds_the_push_after_the_users_callbacks() -> None:
    config = cartpole(pushed=True)
    assert config.callbacks_on_checkpoint_loaded == [own_callback, push_weights_after_restore]
    with_weights_pushed_after_restore(config)  # once only, however often it is applied
    assert config.callbacks_on_checkpoint_loaded == [own_callback, push_weights_after_restore]
    for name in ("ppo_cartpole", "pbt_ppo_cartpole", "selfplay_connect4", "qmix_spread"):
        experiment = load_experiment(ROOT / "experiments" / f"{name}.py")
        callbacks = param_space(experiment)["callbacks_on_checkpoint_loaded"]
        assert push_weights_after_restore in callbacks, name
