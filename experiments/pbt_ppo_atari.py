"""Population Based Training of PPO on Atari Pong: the cluster-scale PBT sweep.

Eight trials of `ppo_atari.py`'s PPO; every 50 iterations (about 51k env steps) the worst
quarter copies a best trial's checkpoint and perturbs learning rate, entropy coefficient
and clip. Expected: the best trial reaches a return of 20 in fewer env steps than a single
`ppo_atari.py` run (Jaderberg et al. 2017 report PBT beating hand-tuned baselines on Atari).
Needs a cluster: each trial wants 9 CPUs (`--num-env-runners 8`) and one GPU learner.
Not measured here (docs/benchmarks.md).
"""

from ray import tune
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import PBT, Experiment, metrics
from rlsuite.rl.frames import ScaledFramesPPOModule

config = (
    PPOConfig()
    # uint8 frames, scaled in the module (rlsuite.rl.frames): a quarter of the bytes.
    .environment("atari/pong", env_config={"frame_dtype": "uint8"})
    .env_runners(num_env_runners=8, num_envs_per_env_runner=8)
    .learners(num_learners=1, num_gpus_per_learner=1)
    .training(
        lr=2.5e-4,  # CleanRL's Atari value, the population's starting point
        train_batch_size_per_learner=1024,  # CleanRL: 8 envs x 128 steps
        minibatch_size=256,
        num_epochs=4,
        lambda_=0.95,
        clip_param=0.1,
        entropy_coeff=0.01,
        vf_loss_coeff=0.5,
        use_kl_loss=False,
        grad_clip=0.5,
        grad_clip_by="global_norm",
    )
    .rl_module(
        rl_module_spec=RLModuleSpec(module_class=ScaledFramesPPOModule),
        model_config=DefaultModelConfig(
            # The Nature-DQN CNN, unpadded as in the paper (RLlib pads to "same").
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
    stop={metrics.EPISODE_RETURN_MEAN: 20, metrics.ENV_STEPS_SAMPLED_LIFETIME: 10_000_000},
    search={"lr": tune.loguniform(1e-4, 1e-3)},
    scheduler=PBT(
        hyperparam_mutations={
            "lr": tune.loguniform(1e-5, 1e-3),
            "entropy_coeff": [0.0, 0.001, 0.01, 0.02],
            "clip_param": [0.1, 0.2, 0.3],
        },
        perturbation_interval=50,
    ),
    num_samples=8,
    checkpoint_every=50,  # the perturbation interval: exploits copy fresh checkpoints
)
