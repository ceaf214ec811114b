"""Population Based Training of APPO on Atari Pong: the asynchronous cluster-scale sweep.

Eight trials of `appo_atari.py`'s APPO, their learning rates sampled; every 50 iterations
the worst quarter copies a best trial's checkpoint and perturbs entropy coefficient and
clip. Not the learning rate: after an exploit, APPO's learner in Ray 2.60 keeps training
with the donor's learning rate (the suite's check, `rlsuite/rl/pbt_check.py`, stops such a
trial: "default_policy lr=0.000817 (config 0.000981)" in a smoke run), where PPO's
follows the perturbed config. PBT fits
APPO's asynchronous learner: Tune checkpoints and restores the whole Algorithm (learner,
weights, optimizer state) between iterations, when no batch is in flight that matters,
and V-trace corrects for the few batches that env runners sampled with the weights before
an exploit. The suite checks after each exploit that the learner uses the perturbed values
(`rlsuite/rl/pbt_check.py`), as for PPO. Expected: not yet measured here (RLlib's tuned
`pong_appo.py` reaches 20 within 10M env steps; PBT should get there in fewer). Needs a
cluster: each trial wants 9 CPUs (8 env runners and the trial) and one GPU learner.
"""

from ray import tune
from ray.rllib.algorithms.appo import APPOConfig
from ray.rllib.core.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import PBT, Experiment, metrics
from rlsuite.rl.frames import ScaledFramesAPPOModule

config = (
    APPOConfig()
    # uint8 frames, scaled in the module (rlsuite.rl.frames): a quarter of the bytes.
    .environment("atari/pong", env_config={"frame_dtype": "uint8"})
    .env_runners(
        num_env_runners=8,
        num_envs_per_env_runner=8,
        gym_env_vectorize_mode="vector_entry_point",  # ale-py's C++ AtariVectorEnv
    )
    .learners(num_learners=1, num_gpus_per_learner=1)
    .training(
        # appo_atari.py's settings (RLlib's tuned pong_appo.py), a constant entropy
        # coefficient instead of its schedule, since PBT perturbs it.
        train_batch_size_per_learner=500,
        target_network_update_freq=2,
        lr=5e-4,
        vf_loss_coeff=1.0,
        entropy_coeff=0.01,
        clip_param=0.4,  # APPO's default
        broadcast_interval=5,
        circular_buffer_num_batches=4,
        circular_buffer_iterations_per_batch=2,
    )
    .rl_module(
        rl_module_spec=RLModuleSpec(module_class=ScaledFramesAPPOModule),
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
    stop={metrics.EPISODE_RETURN_MEAN: 20, metrics.ENV_STEPS_SAMPLED_LIFETIME: 10_000_000},
    search={"lr": tune.loguniform(1e-4, 1e-3)},
    scheduler=PBT(
        hyperparam_mutations={
            "entropy_coeff": [0.0, 0.001, 0.01, 0.02],
            "clip_param": [0.2, 0.3, 0.4],
        },
        perturbation_interval=50,
    ),
    num_samples=8,
    checkpoint_every=50,  # the perturbation interval: exploits copy fresh checkpoints
)
