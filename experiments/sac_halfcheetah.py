"""SAC on MuJoCo HalfCheetah-v5.

Expected: a mean return of about 10,000 after 1M env steps (CleanRL's
`sac_continuous_action.py` benchmark with these settings; Haarnoja et al. 2018 report
about 11,000 at 1M steps). Not measured here: 1M SAC steps need a GPU machine
(docs/benchmarks.md).
"""

from ray.rllib.algorithms.sac import SACConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics

config = (
    SACConfig()
    .environment("mujoco/halfcheetah")
    .env_runners(num_env_runners=1)
    .training(
        actor_lr=3e-4,  # CleanRL's policy learning rate
        critic_lr=1e-3,  # CleanRL's Q learning rate
        alpha_lr=1e-3,
        lr=None,
        target_entropy="auto",  # -|A|, as in Haarnoja et al. 2018
        tau=0.005,
        train_batch_size_per_learner=256,
        target_network_update_freq=1,
        replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 1_000_000},
        num_steps_sampled_before_learning_starts=5_000,  # CleanRL's learning_starts
    )
    .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[256, 256], fcnet_activation="relu"))
)

experiment = Experiment(
    config=config,
    stop={
        metrics.EPISODE_RETURN_MEAN: 10_000,
        metrics.ENV_STEPS_SAMPLED_LIFETIME: 1_000_000,
    },
    checkpoint_every=50,
)
