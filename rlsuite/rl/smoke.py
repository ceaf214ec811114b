"""`--smoke` for RLlib configs: no GPUs, sampling in the trial's own process (IMPALA and
APPO: one env runner), tiny batches and models."""

from __future__ import annotations

import dataclasses
from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.algorithms.impala import IMPALAConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import envs

TRAIN_BATCH = 128
MINIBATCH = 64
# IMPALA and APPO: fragments that divide the train batch (their minibatch check).
IMPALA_FRAGMENT = 32
OFF_POLICY_BATCH = 32
# Off-policy env steps sampled per training step. RLlib's "auto" fragment for SAC and DQN
# is 1 env step, each followed by an update: a smoke iteration of 128 steps was 128
# updates, 8 s of masac_multiwalker on 2 vCPUs. With 16 steps and RLlib's own ratio (one
# update per fragment; the files' `training_intensity` unset) an iteration updates 8 times.
OFF_POLICY_FRAGMENT = 16
REPLAY_CAPACITY = 1_000
# Short episodes, so that two tiny iterations finish some and report a return.
MAX_EPISODE_STEPS = 50
HIDDEN = [16]
# Conv layers keep their kernels and strides (so the same shapes come out) with at most
# this many channels: a 20-piston pixel env otherwise spends a minute in its CNN.
CONV_CHANNELS = 8


def smoke_config(config: AlgorithmConfig) -> AlgorithmConfig:
    """A copy of `config`: no GPUs, no env runner actors (IMPALA, APPO: at most one), tiny
    batches, buffers, models."""
    config = config.copy(copy_frozen=False)
    # A remote env runner is one more process importing torch and RLlib: `ppo_cartpole.py
    # --smoke` took 30.0 and 33.0 s with one, 21.4 and 24.6 s without (alternating, 2 vCPUs).
    # The trial is a Ray actor of its own, so the env and the config still cross a process
    # boundary; `--num-env-runners 1` after `--smoke` brings a runner back. IMPALA and APPO
    # keep theirs: their asynchronous sampling is built around remote runners.
    runners = min(config.num_env_runners, 1) if isinstance(config, IMPALAConfig) else 0
    config.env_runners(
        num_env_runners=runners,
        num_envs_per_env_runner=1,
        rollout_fragment_length="auto",
    )
    config.learners(num_learners=0, num_gpus_per_learner=0)
    # A config whose env wraps a registry env under another name (MADDPG's joint env)
    # says so itself: `env_takes_max_episode_steps`.
    if envs.takes_max_episode_steps(config.env) or getattr(
        config, "env_takes_max_episode_steps", False
    ):
        config.environment(env_config={**config.env_config, "max_episode_steps": MAX_EPISODE_STEPS})
    config.reporting(min_time_s_per_iteration=None, min_train_timesteps_per_iteration=0)
    if _is_off_policy(config):
        _shrink_off_policy(config)
    elif isinstance(config, IMPALAConfig):  # APPO too: asynchronous, no minibatches to set
        config.env_runners(rollout_fragment_length=IMPALA_FRAGMENT)
        config.training(train_batch_size_per_learner=TRAIN_BATCH)
        config.reporting(min_sample_timesteps_per_iteration=TRAIN_BATCH)
    else:
        config.training(
            train_batch_size_per_learner=TRAIN_BATCH,
            minibatch_size=MINIBATCH,
            num_epochs=1,
        )
        config.reporting(min_sample_timesteps_per_iteration=0)
    if config.evaluation_interval:
        config.evaluation(
            evaluation_interval=1,
            evaluation_duration=1,
            evaluation_duration_unit="episodes",
            evaluation_num_env_runners=0,
            evaluation_parallel_to_training=False,
        )
    _shrink_model(config)
    return config


def _is_off_policy(config: AlgorithmConfig) -> bool:
    return isinstance(getattr(config, "replay_buffer_config", None), dict)


def _shrink_off_policy(config: AlgorithmConfig) -> None:
    buffer = {**config.replay_buffer_config, "capacity": REPLAY_CAPACITY}  # type: ignore[attr-defined]
    config.training(  # type: ignore[call-arg]
        train_batch_size_per_learner=OFF_POLICY_BATCH,
        replay_buffer_config=buffer,
        num_steps_sampled_before_learning_starts=OFF_POLICY_BATCH,
        training_intensity=None,
    )
    # RLlib's DQN checks a set fragment against `n_step`, which fails on a range of n-steps
    # (dqn_cartpole's (2, 5)): those keep RLlib's "auto" fragment.
    if not isinstance(getattr(config, "n_step", 1), tuple | list):
        config.env_runners(rollout_fragment_length=OFF_POLICY_FRAGMENT)
    if getattr(config, "target_network_update_freq", 0) > TRAIN_BATCH:
        config.training(target_network_update_freq=TRAIN_BATCH)  # type: ignore[call-arg]
    # Off-policy algorithms sample one fragment per step; ask for enough steps per
    # iteration that episodes end and the learner updates in both iterations.
    config.reporting(min_sample_timesteps_per_iteration=TRAIN_BATCH)


def _shrink_model(config: AlgorithmConfig) -> None:
    model: Any = config._model_config
    if isinstance(model, dict):
        try:
            model = DefaultModelConfig(**model)
        except TypeError:
            return  # a custom model's own config: leave its sizes alone
    if not isinstance(model, DefaultModelConfig):
        return
    head = HIDDEN if model.head_fcnet_hiddens else []
    conv: Any = [[min(c, CONV_CHANNELS), *rest] for c, *rest in model.conv_filters or []]
    config.rl_module(
        model_config=dataclasses.replace(
            model,
            fcnet_hiddens=HIDDEN,
            head_fcnet_hiddens=head,
            lstm_cell_size=16,
            conv_filters=conv or None,  # None: RLlib's default CNN for the frame size
        )
    )
