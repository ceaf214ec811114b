"""QMIX on MPE simple_spread: three agents share one Q network (agent-id one-hot), and a
monotonic mixer, whose weights come from hypernetworks on the global state (all agents'
observations), turns their chosen Q values into the team's Q_tot.

The task of `mappo_spread.py` (three agents cover three landmarks without colliding, 25
steps, discrete actions); the team plays as one RLlib agent whose reward is the sum of
the agents' rewards, so `episode_return_mean` is the team return as in the other spread
experiments (about -81 for uniformly random actions: `python scripts/bench_multiagent.py`).

Measured (`--seed 0 --seeds 3 --stop env_steps=50000`, `rlsuite.report
--final-env-steps 5000`): team return -79.7 to -81.5 over the first 5k steps, IQM -58.7 [-59.0,
-58.5] over the last 5k of 50k (VDN -62.9, `mappo_spread.py` -65.4; docs/multiagent.md);
seed 0 at 100k: -60.4 over the last 10k of 100k. At the 500k budget (docs/benchmarks.md,
`python scripts/benchmark.py --only qmix_spread`, seeds 0-2) it diverges: best 10k-step
windows -55.9/-55.7/-54.5 at 60k-77k steps, then Q_tot runs away and the return falls to
-84.5/-111.2/-118.5 over the last 10k (IQM -104.5 [-118.3, -83.3]), worse than random;
cause not yet found (docs/multiagent.md), so `--stop env_steps=100000` for now.
Method: Rashid et al. 2018, "QMIX"; settings from PyMARL's `qmix.yaml` where they carry
over to a feed-forward agent network.
"""

from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent.qmix import QMIXConfig, grouped

config = (
    QMIXConfig()
    .environment(**grouped("mpe/simple_spread"))  # the three agents as one team
    .env_runners(
        num_env_runners=0,  # sampling in the trainable's process: a remote runner only adds latency
        num_envs_per_env_runner=8,  # one forward pass acts in 8 episodes
    )
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
        epsilon=[(0, 1.0), (50_000, 0.05)],  # PyMARL's epsilon_anneal_time
        num_steps_sampled_before_learning_starts=1_000,
        replay_buffer_config={
            "type": "EpisodeReplayBuffer",  # uniform, as PyMARL's
            "capacity": 125_000,  # env steps: PyMARL's 5,000 episodes of 25
        },
    )
    .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], fcnet_activation="relu"))
)

experiment = Experiment(
    config=config,
    stop={metrics.ENV_STEPS_SAMPLED_LIFETIME: 500_000},
    checkpoint_every=20,
)
