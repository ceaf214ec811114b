"""Overlapped PPO (rlsuite/rl/overlapped_ppo.py): the runners' next sample request is out
while the learner updates, their episodes come from the weights one update older than
PPO's, and it learns CartPole; RLlib's PPO step where it does not overlap. The flag
through the launcher, Tune and the final checkpoint, with a request still in flight when
the trial ends: test_experiments.py's smoke run of ppo_atari.py (its OVERLAPPED; one run
of the file for both, CI time)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module import RLModule
from ray.rllib.utils.metrics import NUM_AGENT_STEPS_SAMPLED, NUM_ENV_STEPS_SAMPLED

from rlsuite.envs import registry
from rlsuite.launcher.loader import load_experiment
from rlsuite.rl.overlapped_ppo import SAMPLE_TAG, OverlappedPPOConfig, _steps_sampled
from rlsuite.rl.weights_sync import with_weights_pushed_after_restore
from tests.helpers import ROOT, assert_learns, local_ray


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    with local_ray():
        yield


def cartpole(overlap: bool, env_runners: int = 1) -> OverlappedPPOConfig:
    return (
        OverlappedPPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=2)
        .training(
            overlap_sampling=overlap,
            lr=1e-3,  # updates that move the log-probabilities well past float32 rounding
            train_batch_size_per_learner=256,
            minibatch_size=64,
            num_epochs=1,
        )
        .debugging(seed=0)
    )


def module_of(algorithm: Algorithm) -> RLModule:
    spec = algorithm.config.get_rl_module_spec(
        env=gym.make("CartPole-v1"), spaces=None, inference_only=False
    )
    return spec.build()


def sampled_with(episodes: list[Any], snapshots: list[dict[str, Any]], module: RLModule) -> int:
    """Which weight snapshot gives the log-probabilities the episodes' actions carry: the
    one that matches to float32 rounding, where every other one is clearly off."""
    episode = max(episodes, key=len)
    obs = torch.as_tensor(np.array(episode.get_observations(slice(0, len(episode)))))
    actions = torch.as_tensor(np.array(episode.get_actions()))
    carried = torch.as_tensor(np.array(episode.get_extra_model_outputs(Columns.ACTION_LOGP)))
    errors = []
    for weights in snapshots:
        module.set_state(weights)
        with torch.no_grad():
            logits = module.forward_exploration({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
        logp = torch.log_softmax(logits, -1).gather(-1, actions[:, None]).squeeze(-1)
        errors.append(float((logp - carried.float()).abs().max()))
    best = int(np.argmin(errors))
    assert errors[best] < 1e-5, errors
    assert all(error > 1e-4 for index, error in enumerate(errors) if index != best), errors
    return best


def trace(overlap: bool, iterations: int = 4) -> tuple[list[int], list[int]]:
    """Per update: the sample requests in flight when it starts, and the index of the
    learner's weight snapshot (0: the initial weights, k: after update k) its episodes
    were sampled with."""
    algorithm = cartpole(overlap).build_algo()
    module = module_of(algorithm)
    snapshots = [algorithm.learner_group.get_weights()[DEFAULT_MODULE_ID]]
    in_flight: list[int] = []
    sampled_by: list[int] = []
    update = algorithm.learner_group.update

    def traced_update(*, episodes: list[Any], **kwargs: Any) -> Any:
        in_flight.append(algorithm.env_runner_group.num_in_flight_async_reqs(SAMPLE_TAG))
        sampled_by.append(sampled_with(episodes, snapshots, module))
        results = update(episodes=episodes, **kwargs)
        snapshots.append(algorithm.learner_group.get_weights()[DEFAULT_MODULE_ID])
        return results

    algorithm.learner_group.update = traced_update  # type: ignore[method-assign]
    try:
        for _ in range(iterations):
            algorithm.train()
    finally:
        algorithm.stop()
    return in_flight, sampled_by


@pytest.mark.timeout(240)
def test_runners_sample_the_next_batch_while_the_learner_learns(ray_session: None) -> None:
    in_flight, sampled_by = trace(overlap=True)
    assert in_flight == [1, 1, 1, 1]
    # The first batch is sampled before any update, the second during the first update
    # with the same weights; from then on each batch is one update behind PPO's.
    assert sampled_by == [0, 0, 1, 2]


@pytest.mark.timeout(240)
def test_without_overlap_it_is_ppo(ray_session: None) -> None:
    in_flight, sampled_by = trace(overlap=False)
    assert in_flight == [0, 0, 0, 0]
    assert sampled_by == [0, 1, 2, 3]


@pytest.mark.timeout(240)
def test_after_a_restore_the_next_batch_comes_from_the_restored_weights(
    ray_session: None, tmp_path: Path
) -> None:
    """A request in flight when a checkpoint is loaded into the live algorithm (a script's
    or a callback's `load_checkpoint`) is dropped, not learned from."""
    # As the launcher builds it: the runners take the restored weights at once.
    algorithm = with_weights_pushed_after_restore(cartpole(overlap=True)).build_algo()
    module = module_of(algorithm)
    try:
        algorithm.train()
        algorithm.save_to_path(str(tmp_path))
        saved = algorithm.learner_group.get_weights()[DEFAULT_MODULE_ID]
        algorithm.train()
        later = algorithm.learner_group.get_weights()[DEFAULT_MODULE_ID]
        algorithm.train()  # its next batch's request goes out with `later`'s weights
        algorithm.load_checkpoint(str(tmp_path))
        assert algorithm.env_runner_group.num_in_flight_async_reqs(SAMPLE_TAG) == 0
        sampled_by: list[int] = []
        update = algorithm.learner_group.update

        def traced_update(*, episodes: list[Any], **kwargs: Any) -> Any:
            # Before the update: RLlib's learner connector edits the episodes in place.
            sampled_by.append(sampled_with(episodes, [later, saved], module))
            return update(episodes=episodes, **kwargs)

        algorithm.learner_group.update = traced_update  # type: ignore[method-assign]
        algorithm.train()
        assert sampled_by == [1]
        # The same for a state set directly (RLlib's `Algorithm.set_state`).
        assert algorithm.env_runner_group.num_in_flight_async_reqs(SAMPLE_TAG) == 1
        algorithm.set_state(algorithm.get_state())
        assert algorithm.env_runner_group.num_in_flight_async_reqs(SAMPLE_TAG) == 0
    finally:
        algorithm.stop()


@pytest.mark.timeout(240)
def test_sampling_in_the_trials_process_runs_ppos_step(ray_session: None) -> None:
    algorithm = cartpole(overlap=True, env_runners=0).build_algo()
    try:
        result = algorithm.train()
        assert algorithm.env_runner_group.num_in_flight_async_reqs(SAMPLE_TAG) == 0
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 256
    finally:
        algorithm.stop()


@pytest.mark.slow
def test_overlapped_ppo_learns_cartpole() -> None:
    """`ppo_cartpole.py`'s settings with one remote runner, overlapped: 450 within 100k env
    steps. Measured (`python scripts/overlap_learning.py --seeds 7`, 2026-11-30): seeds 0-6
    overlapped 13.4k-30.8k (seed 0: 27.8k), the same settings unoverlapped 10.3k-28.8k."""
    base = load_experiment(ROOT / "experiments/ppo_cartpole.py").config
    registry.register(base.env)
    config = OverlappedPPOConfig().update_from_dict(base.to_dict())
    config.env_runners(num_env_runners=1).training(overlap_sampling=True).debugging(seed=0)
    assert_learns(config, target=450, within_env_steps=100_000)


def test_a_config_that_would_queue_more_samples_is_refused() -> None:
    config = cartpole(overlap=True).env_runners(max_requests_in_flight_per_env_runner=2)
    with pytest.raises(ValueError, match="one sample request in flight"):
        config.validate()
    config.training(overlap_sampling=False).validate()


def test_connector_states_are_awaited_as_long_as_a_sample() -> None:
    """RLlib gathers the runners' connector states behind the request in flight: with its
    10 s it would drop them (a MeanStdFilter's statistics) for samples that take longer."""
    config = cartpole(overlap=True)
    assert config.sync_filters_on_rollout_workers_timeout_s == config.sample_timeout_s == 60
    config.env_runners(sample_timeout_s=120)  # as `--set env_runners.sample_timeout_s=120`
    assert config.sync_filters_on_rollout_workers_timeout_s == 120
    config.validate()
    config.sample_timeout_s = 180  # past the builder
    with pytest.raises(ValueError, match=r"sync_filters_on_rollout_workers_timeout_s \(RLlib"):
        config.validate()
    config.training(overlap_sampling=False).validate()


def test_a_batch_fills_in_the_unit_ppo_counts() -> None:
    metrics = {NUM_ENV_STEPS_SAMPLED: 100, NUM_AGENT_STEPS_SAMPLED: {"a": 100, "b": 100}}
    assert _steps_sampled(metrics, by_agent=False) == 100
    assert _steps_sampled(metrics, by_agent=True) == 200


def test_overlap_sampling_takes_a_bool() -> None:
    with pytest.raises(ValueError, match="True or False"):
        cartpole(overlap=True).training(overlap_sampling="yes").validate()
