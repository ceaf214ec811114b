"""APPO on Atari Pong: asynchronous PPO for many env runners (any ALE game with
`--set environment.env=atari/breakout`).

Expected: RLlib's tuned example (`rllib/tuned_examples/appo/pong_appo.py`) stops at a
return of 20 within 10M env steps; not yet measured here (APPO sampled 354-432 env
steps/s on 2 CPUs with the padded CNN the file had before 2026-11-28, docs/performance.md,
so 10M steps take 6-8 hours a seed or less; see docs/clusters.md for a GPU cluster).
Env runners sample while the learner trains (V-trace corrects the lag), so APPO gains
from every env runner a cluster adds, where PPO waits for its batch.
"""

from ray.rllib.algorithms.appo import APPOConfig
from ray.rllib.core.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.rl.frames import ScaledFramesAPPOModule

config = (
    APPOConfig()
    # uint8 frames, scaled in the module (rlsuite.rl.frames): a quarter of the bytes.
    .environment("atari/pong", env_config={"frame_dtype": "uint8"})
    .env_runners(
        # Asynchronous sampling needs remote runners; two fit a 2-CPU machine next to the
        # learner. Scale with --num-env-runners (e.g. 14 on a 16-core GPU node).
        num_env_runners=2,
        num_envs_per_env_runner=8,
        # ale-py's C++ AtariVectorEnv steps and preprocesses all 8 games per runner.
        gym_env_vectorize_mode="vector_entry_point",
    )
    .training(
        # From RLlib's tuned pong_appo.py: small batches, often, reused from a buffer.
        train_batch_size_per_learner=500,
        target_network_update_freq=2,
        lr=5e-4,
        vf_loss_coeff=1.0,
        entropy_coeff=[[0, 0.01], [3_000_000, 0.0]],  # "crucial to finetune" (RLlib's note)
        broadcast_interval=5,  # weights to the runners every 5 updates
        circular_buffer_num_batches=4,
        circular_buffer_iterations_per_batch=2,
    )
    .rl_module(
        rl_module_spec=RLModuleSpec(module_class=ScaledFramesAPPOModule),
        model_config=DefaultModelConfig(
            # The Nature-DQN CNN for the suite's 84x84 frames (RLlib's example uses 64x64),
            # unpadded as in the paper (RLlib pads to "same").
            conv_filters=[[32, 8, 4, "valid"], [64, 4, 2, "valid"], [64, 3, 1, "valid"]],
            conv_activation="relu",
            head_fcnet_hiddens=[256],  # RLlib's tuned example
            vf_share_layers=True,
        ),
    )
)

experiment = Experiment(
    config=config,
    stop={
        metrics.EPISODE_RETURN_MEAN: 20,
        metrics.ENV_STEPS_SAMPLED_LIFETIME: 10_000_000,
    },
    checkpoint_every=50,
)
