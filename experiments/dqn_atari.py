"""DQN on Atari Pong with the Rainbow parts RLlib has: double Q, dueling heads, 3-step
returns and prioritized replay.

Expected: a mean return of about 20 within 3M env steps (12M frames); Dopamine's
Rainbow reaches 20 on Pong within its first 10M frames with these settings
(Hessel et al. 2018; Castro et al. 2018). Not measured here: 3M Atari steps need a GPU
machine (docs/benchmarks.md).
"""

from ray.rllib.algorithms.dqn import DQNConfig
from ray.rllib.core.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.rl.frames import ScaledFramesDQNModule

config = (
    DQNConfig()
    # uint8 frames, scaled in the module (rlsuite.rl.frames): a quarter of the bytes.
    .environment("atari/pong", env_config={"frame_dtype": "uint8"})
    .env_runners(
        # Sample in the trial's own process: DQN asks for 4 steps before each update, and a
        # remote runner would make that a round trip; scale out with --num-env-runners.
        num_env_runners=0,
        rollout_fragment_length=4,  # one update per 4 steps
        gym_env_vectorize_mode="vector_entry_point",  # ale-py's C++ AtariVectorEnv
    )
    .training(
        lr=6.25e-5,  # Rainbow's Adam learning rate
        adam_epsilon=1.5e-4,  # Rainbow's Adam epsilon
        train_batch_size_per_learner=32,
        replay_buffer_config={
            "type": "PrioritizedEpisodeReplayBuffer",
            # Frames are float32 84x84x4 (113 kB): 50k steps hold about 6 GB.
            "capacity": 50_000,
            "alpha": 0.5,  # Rainbow's prioritization exponent
            "beta": 0.4,
        },
        n_step=3,  # Rainbow's multi-step return
        double_q=True,
        dueling=True,
        num_steps_sampled_before_learning_starts=20_000,  # Rainbow: 80k frames
        target_network_update_freq=8_000,  # Rainbow: 32k frames
        epsilon=[(0, 1.0), (62_500, 0.01)],  # Rainbow: 250k frames of decay
        grad_clip=10.0,
    )
    .rl_module(
        rl_module_spec=RLModuleSpec(module_class=ScaledFramesDQNModule),
        model_config=DefaultModelConfig(
            # The Nature-DQN CNN, unpadded as in the paper (RLlib pads to "same").
            conv_filters=[[32, 8, 4, "valid"], [64, 4, 2, "valid"], [64, 3, 1, "valid"]],
            conv_activation="relu",
            head_fcnet_hiddens=[512],
        ),
    )
)

experiment = Experiment(
    config=config,
    stop={
        metrics.EPISODE_RETURN_MEAN: 20,
        metrics.ENV_STEPS_SAMPLED_LIFETIME: 3_000_000,
    },
    checkpoint_every=50,
)
