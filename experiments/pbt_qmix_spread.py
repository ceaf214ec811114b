"""Population Based Training of QMIX on MPE simple_spread: four trials of `qmix_spread.py`'s
setup; every 20 iterations (20k env steps) the worst quarter copies a best trial's
checkpoint and perturbs the learning rate and the epsilon-greedy schedule (Jaderberg et
al. 2017). The suite's PBT check compares, after every iteration, the learner's optimizer
with the trial's `lr` and the env runners' Q modules with its `epsilon` schedule, so a
perturbation the restored checkpoint would undo fails the trial instead.

Expected: the population keeps QMIX from diverging. Measured (docs/benchmarks.md,
`python scripts/benchmark.py --only pbt_qmix_spread`, populations seeded 0-2, 2026-11-29,
6,472 s of wall time for the three on 2 vCPUs): the best trial's team return over its last 5
iterations at 500k env steps -50.0, -49.1 and -49.9 (IQM -49.67 [-50.01, -49.15]), level
at about -50 from 120k steps on. `qmix_spread.py`'s settings run to 500k over 3 seeds
diverged (IQM -104.5, below random's -81); its peak, -54.5 to -55.9 over a 10k-step window
at 60k-77k steps, is below the populations' -50 (`qmix_spread.py` stops at 100k for that
reason). VDN at 500k: -42.37 (`vdn_spread.py`).
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
