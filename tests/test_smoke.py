"""`smoke()` is a pure function: tiny CPU settings out, the input untouched."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from ray import tune
from ray.rllib.algorithms.appo import APPOConfig
from ray.rllib.algorithms.dqn import DQNConfig
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import ASHA, PBT, Experiment, metrics
from rlsuite.launcher import smoke
from rlsuite.launcher.prepare import load_and_prepare
from rlsuite.options import RunOptions
from rlsuite.rl import smoke as rl_smoke
from rlsuite.supervised import SupervisedConfig
from tests.helpers import EXPERIMENTS, ROOT


def ppo_experiment() -> Experiment:
    config = (
        PPOConfig()
        .environment("classic/cartpole", env_config={"g": 9.8})
        .env_runners(num_env_runners=6, num_envs_per_env_runner=16)
        .learners(num_learners=4, num_gpus_per_learner=1)
        .training(train_batch_size_per_learner=8000, minibatch_size=512, num_epochs=10)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[512, 512]))
        .evaluation(evaluation_interval=5, evaluation_duration=20)
    )
    return Experiment(
        config=config,
        stop={metrics.EPISODE_RETURN_MEAN: 450},
        search={"lr": tune.grid_search([1e-3, 1e-4, 1e-5]), "gamma": tune.uniform(0.9, 0.99)},
        scheduler=PBT(hyperparam_mutations={"lr": [1e-3, 1e-4]}, perturbation_interval=20),
        num_samples=8,
        checkpoint_every=50,
    )


def test_smoke_shrinks_everything() -> None:
    small = smoke.smoke(ppo_experiment())
    config = small.config
    assert config.num_env_runners == 0 and config.num_envs_per_env_runner == 1
    assert config.num_learners == 0 and config.num_gpus_per_learner == 0
    assert config.train_batch_size_per_learner == rl_smoke.TRAIN_BATCH and config.num_epochs == 1
    assert config._model_config.fcnet_hiddens == rl_smoke.HIDDEN
    assert config.env_config == {"g": 9.8, "max_episode_steps": rl_smoke.MAX_EPISODE_STEPS}
    assert config.evaluation_duration == 1
    assert small.stop == {metrics.TRAINING_ITERATION: smoke.ITERATIONS}
    assert small.num_samples == 2 and small.checkpoint_every == 1
    assert small.search["lr"] == {"grid_search": [1e-3, 1e-4]}
    assert isinstance(small.scheduler, PBT) and small.scheduler.perturbation_interval == 1
    assert small.scheduler.synch


def test_smoke_keeps_one_env_runner_for_impala_and_appo_only() -> None:
    appo = APPOConfig().environment("classic/cartpole").env_runners(num_env_runners=14)
    assert rl_smoke.smoke_config(appo).num_env_runners == 1
    ppo = PPOConfig().environment("classic/cartpole").env_runners(num_env_runners=14)
    assert rl_smoke.smoke_config(ppo).num_env_runners == 0


def test_env_runners_flag_after_smoke_brings_one_back(tmp_path: Path) -> None:
    options = RunOptions(smoke=True, num_env_runners=1, storage_path=str(tmp_path))
    prepared = load_and_prepare(ROOT / "experiments" / "ppo_cartpole.py", options)
    assert prepared.experiment.config.num_env_runners == 1


def test_smoke_leaves_its_input_untouched() -> None:
    experiment = ppo_experiment()
    before = experiment.config.to_dict()
    fields = {
        f.name: getattr(experiment, f.name)
        for f in dataclasses.fields(experiment)
        if f.name != "config"
    }
    smoke.smoke(experiment)
    assert experiment.config.to_dict() == before
    assert {f: getattr(experiment, f) for f in fields} == fields


def test_smoke_is_idempotent() -> None:
    once = smoke.smoke(ppo_experiment())
    twice = smoke.smoke(once)
    assert twice.config.to_dict() == once.config.to_dict()
    assert twice.stop == once.stop and twice.num_samples == once.num_samples


def test_smoke_shrinks_replay_and_learning_starts() -> None:
    config = (
        DQNConfig()
        .environment("classic/cartpole")
        .training(
            replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 1_000_000},
            num_steps_sampled_before_learning_starts=50_000,
            target_network_update_freq=8_000,
        )
    )
    small = rl_smoke.smoke_config(config)
    assert small.replay_buffer_config["capacity"] == rl_smoke.REPLAY_CAPACITY
    assert small.replay_buffer_config["type"] == "PrioritizedEpisodeReplayBuffer"
    assert small.num_steps_sampled_before_learning_starts <= rl_smoke.TRAIN_BATCH
    assert small.target_network_update_freq <= rl_smoke.TRAIN_BATCH


def test_smoke_asha_runs_to_the_smoke_iterations() -> None:
    experiment = dataclasses.replace(ppo_experiment(), scheduler=ASHA(max_t=500, grace_period=50))
    scheduler = smoke.smoke(experiment).scheduler
    assert (
        isinstance(scheduler, ASHA)
        and scheduler.max_t == smoke.ITERATIONS
        and scheduler.grace_period == smoke.ITERATIONS
    )


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_every_experiment_smokes_to_cpu(path: Path, tmp_path: Path) -> None:
    """Every check `--smoke` makes before Ray starts (RLlib's config validation among
    them) passes for every file, those whose smoke run is `slow` included
    (tests/smoke_matrix.py's SMOKE_COVERED_BY); nothing is written yet."""
    storage = tmp_path / "results"
    small = load_and_prepare(path, RunOptions(smoke=True, storage_path=str(storage))).experiment
    assert not storage.exists()
    if isinstance(small.config, SupervisedConfig):
        assert not small.config.use_gpu and small.config.num_workers == 1
        assert small.config.dataset.startswith("synthetic") and small.config.data_path is None
        assert small.config.epochs == smoke.ITERATIONS
    else:
        assert small.config.num_gpus_per_learner == 0 and small.config.num_env_runners <= 1
    assert small.stop == {metrics.TRAINING_ITERATION: smoke.ITERATIONS}


def test_smoke_narrows_conv_layers_keeping_kernels_and_strides() -> None:
    nature_cnn = [[32, 8, 4], [64, 4, 2], [64, 3, 1]]
    config = PPOConfig().rl_module(model_config=DefaultModelConfig(conv_filters=nature_cnn))
    small = rl_smoke.smoke_config(config)
    channels = rl_smoke.CONV_CHANNELS
    assert small._model_config.conv_filters == [
        [channels, 8, 4],
        [channels, 4, 2],
        [channels, 3, 1],
    ]
    assert config._model_config.conv_filters == nature_cnn  # the input is untouched
    default = rl_smoke.smoke_config(PPOConfig())
    assert default._model_config.conv_filters is None  # RLlib's own CNN for the frame size
