"""Population Based Training of QMIX on MPE simple_spread: four trials of `qmix_spread.py`'s
setup; every 20 iterations (20k env steps) the worst quarter copies a best trial's
checkpoint and perturbs the learning rate and the epsilon-greedy schedule (Jaderberg et
al. 2017). The suite's PBT check compares, after every iteration, the learner's optimizer
with the trial's `lr` and the env runners' Q modules with its `epsilon` schedule, so a
perturbation the restored checkpoint would undo fails the trial instead.

Expected: not yet measured here (`qmix_spread.py` is the single-trial run).
"""

from ray import tune
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import PBT, Experiment, metrics
from rlsuite.multiagent.qmix import QMIXConfig, grouped

LEARNING_RATES = tune.loguniform(1e-4, 2e-3)  # around PyMARL's 5e-4
# Epsilon anneals from 1 to its floor over PyMARL's 50k steps, or twice as slowly.
EPSILON_SCHEDULES = [
    [(0, 1.0), (50_000, 0.05)],  # PyMARL's
    [(0, 1.0), (50_000, 0.1)],
    [(0, 1.0), (100_000, 0.05)],
]

config = (
    QMIXConfig()
    .environment(**grouped("mpe/simple_spread"))  # the three agents as one team
    .env_runners(num_env_runners=0, num_envs_per_env_runner=8)
    .training(
        mixer="qmix",
        mixing_embed_dim=32,  # PyMARL's value
        hypernet_embed_dim=64,  # PyMARL's value
        lr=5e-4,  # PyMARL's value
        gamma=0.99,  # PyMARL's value
        grad_clip=10.0,  # PyMARL's grad_norm_clip
        train_batch_size_per_learner=256,  # joint transitions (PyMARL replays 32 episodes)
        td_error_loss_fn="mse",  # PyMARL regresses the squared TD error
        target_network_update_freq=5_000,  # env steps: PyMARL's 200 episodes of 25
        epsilon=EPSILON_SCHEDULES[0],
        num_steps_sampled_before_learning_starts=1_000,
        replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 125_000},
    )
    .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], fcnet_activation="relu"))
)

experiment = Experiment(
    config=config,
    stop={metrics.ENV_STEPS_SAMPLED_LIFETIME: 500_000},
    search={"lr": LEARNING_RATES, "epsilon": tune.choice(EPSILON_SCHEDULES)},
    scheduler=PBT(
        hyperparam_mutations={"lr": LEARNING_RATES, "epsilon": EPSILON_SCHEDULES},
        perturbation_interval=20,
    ),
    num_samples=4,
    checkpoint_every=20,  # PBT exploits checkpoints: keep them on its cadence
)
