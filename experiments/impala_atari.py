"""IMPALA on Atari Pong: V-trace actor-learner training for many env runners (any ALE game
with `--set environment.env=atari/breakout`).

Expected: IMPALA (Espeholt et al. 2018) solves Pong (return ~20) within 10M frames on
many actors; not yet measured here (IMPALA's throughput on 2 CPUs is not measured; if
it matched APPO's 354-432 env steps/s, measured with the padded CNN of before
2026-11-28, docs/performance.md, 10M steps would take 6-8 hours). Like
APPO, env runners never wait for the learner; unlike APPO there is no clipped surrogate
and no target network, only V-trace's importance weights.
"""

from ray.rllib.algorithms.impala import IMPALAConfig
from ray.rllib.core.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.rl.frames import ScaledFramesPPOModule

config = (
    IMPALAConfig()
    # uint8 frames, scaled in the module (rlsuite.rl.frames): a quarter of the bytes.
    .environment("atari/pong", env_config={"frame_dtype": "uint8"})
    .env_runners(
        num_env_runners=2,  # asynchronous sampling needs remote runners; scale with the flag
        num_envs_per_env_runner=8,
        gym_env_vectorize_mode="vector_entry_point",  # ale-py's C++ AtariVectorEnv
    )
    .training(
        train_batch_size_per_learner=500,  # as APPO's tuned Pong example
        lr=5e-4,
        vf_loss_coeff=0.5,  # the IMPALA paper's baseline cost
        entropy_coeff=[[0, 0.01], [3_000_000, 0.0]],
        grad_clip=40.0,  # the paper's global-norm clip
        broadcast_interval=5,
    )
    .rl_module(
        rl_module_spec=RLModuleSpec(module_class=ScaledFramesPPOModule),
        model_config=DefaultModelConfig(
            # The Nature-DQN CNN, unpadded as in the paper (RLlib pads to "same").
            conv_filters=[[32, 8, 4, "valid"], [64, 4, 2, "valid"], [64, 3, 1, "valid"]],
            conv_activation="relu",
            head_fcnet_hiddens=[256],
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
