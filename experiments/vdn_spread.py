"""VDN on MPE simple_spread: three agents share one Q network (agent-id one-hot), and the
team's Q_tot is the sum of their chosen Q values (no mixing network, no state).

The task and settings of `qmix_spread.py` with `mixer="vdn"`, so the two files compare an
additive with a monotonic mixing of the same agents' values; `episode_return_mean` is
the team return (about -81 for uniformly random actions: `python scripts/bench_multiagent.py`).

Measured (`--seed 0 --seeds 3 --stop env_steps=50000`, `rlsuite.report
--final-env-steps 5000`): team return -80.2 to -81.8 over the first 5k steps, IQM -62.9 [-64.9,
-61.7] over the last 5k of 50k (QMIX -58.7, `mappo_spread.py` -65.4; docs/multiagent.md).
At 200k over 3 seeds: IQM -50.01 [-50.54, -49.23]. At this file's
500k over 3 seeds (`python scripts/benchmark.py --only vdn_spread`, docs/benchmarks.md,
2026-11-28, 558-682 s of training a seed): IQM -42.37 [-43.90, -41.56] over each seed's last
5 iterations (-41.6, -41.7, -43.9). Unlike QMIX it does not diverge (seed 2 to 300k: -47.1
over the last 10k, its Q_tot falling towards the true value; docs/multiagent.md).
Method: Sunehag et al. 2018, "Value-Decomposition Networks for Cooperative Multi-Agent
Learning"; settings from PyMARL's `vdn.yaml`.
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
        mixer="vdn",
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
