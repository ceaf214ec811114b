"""PPO on Atari Pong (any ALE game: `--set environment.env=atari/breakout`).

Expected: a mean return of about 20 after 10M env steps (CleanRL's `ppo_atari.py`
benchmark: 20.4 on Pong after 10M steps with these settings); not measured to 10M here.
Measured on a lent H200 (seed 0, these settings scaled out to 14 runners of 16 envs and a GPU
learner with flags, batch 14,336: docs/performance.md): from -21.0 to -8.8 over the episodes
ending between 1.0M and 1.2M env steps, 1.35M steps in 454 s, with RLlib's "same"-padded
version of the CNN the file had then. The file as it is (the unpadded CNN below, CleanRL's),
seed 0 on 2 vCPUs to 1M env steps (2,197 s of training): from -20.5 over the first 100k
steps to -17.5 over the last 100k; seed 1 (2,272 s): -19.7 over the last 100k; the padded
CNN, seed 0 (3,889 s of training): -12.0 over the last 100k, seed 1: -15.6, ahead per env
step, level or behind per second of training (docs/performance.md). With the runners
sampling while the learner learns (`--set training.overlap_sampling=True`), seed 0 on an H200
at the same scaled-out settings: -19.65 over the episodes ending between 600k and 800k env
steps, 793k steps in 273 s (docs/performance.md). Returns are game scores; rewards are
clipped to [-1, 1] for learning, which leaves Pong's unchanged.
"""

from ray.rllib.core.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.rl.frames import ScaledFramesPPOModule
from rlsuite.rl.mixed_precision import Bf16PPOTorchLearner
from rlsuite.rl.overlapped_ppo import OverlappedPPOConfig

config = (
    # RLlib's PPO as it is (its trials named OverlappedPPO_...). Scaled out to remote runners,
    # `--set training.overlap_sampling=True` has them sample the next batch while the learner
    # learns (one iteration of policy lag: rlsuite/rl/overlapped_ppo.py).
    OverlappedPPOConfig()
    # uint8 frames as ALE makes them, scaled to [0, 1] inside the module (as CleanRL's
    # `x / 255.0`): episodes and the learner's batches move a quarter of the bytes.
    .environment("atari/pong", env_config={"frame_dtype": "uint8"})
    .env_runners(
        # Sample in the trial's own process: PPO never samples while it learns, so on a small
        # machine a remote runner only adds a process; scale out with --num-env-runners.
        num_env_runners=0,
        num_envs_per_env_runner=8,  # CleanRL's 8 parallel envs
        # ale-py's C++ AtariVectorEnv steps and preprocesses all 8 games (envs/atari_vector.py);
        # "sync" runs the standard Python wrappers instead, same frames.
        gym_env_vectorize_mode="vector_entry_point",
    )
    .training(
        lr=2.5e-4,  # CleanRL's Atari value
        train_batch_size_per_learner=1024,  # CleanRL: 8 envs x 128 steps
        minibatch_size=256,  # CleanRL: 4 minibatches
        num_epochs=4,  # CleanRL's update epochs
        lambda_=0.95,
        clip_param=0.1,  # CleanRL's Atari clip
        entropy_coeff=0.01,
        vf_loss_coeff=0.5,
        use_kl_loss=False,  # CleanRL's PPO has no KL penalty
        overlap_sampling=False,
        grad_clip=0.5,
        grad_clip_by="global_norm",
    )
    .learners(
        # The CNN's forward pass in bf16 where the learner's CPU or GPU runs it natively
        # (float32 elsewhere): a learner update of 4k Pong steps takes 24 s instead of 34 s on
        # this AVX512-BF16 CPU (docs/performance.md); the learner takes most of the time.
        # `--set learners.learner_class=None` for RLlib's float32.
        learner_class=Bf16PPOTorchLearner,
    )
    .rl_module(
        rl_module_spec=RLModuleSpec(module_class=ScaledFramesPPOModule),
        model_config=DefaultModelConfig(
            # The Nature-DQN CNN (Mnih et al. 2015) that CleanRL uses, then 512 units:
            # unpadded, 84 -> 20 -> 9 -> 7. RLlib pads to "same" (11x11 at the end, 2.5x the
            # dense weights): PPO ran at 0.59x the speed here (docs/performance.md).
            conv_filters=[[32, 8, 4, "valid"], [64, 4, 2, "valid"], [64, 3, 1, "valid"]],
            conv_activation="relu",
            head_fcnet_hiddens=[512],
            head_fcnet_activation="relu",
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
    checkpoint_every=25,
)
