"""QMIX on MPE simple_spread: three agents share one Q network (agent-id one-hot), and a
monotonic mixer, whose weights come from hypernetworks on the global state (all agents'
observations), turns their chosen Q values into the team's Q_tot.

The task of `mappo_spread.py` (three agents cover three landmarks without colliding, 25
steps, discrete actions); the team plays as one RLlib agent whose reward is the sum of
the agents' rewards, so `episode_return_mean` is the team return as in the other spread
experiments (about -81 for uniformly random actions: `python scripts/bench_multiagent.py`).

Measured (`--seed 0 --seeds 3 --stop env_steps=50000`, `rlsuite.report
--final-env-steps 5000`): team return -79.7 to -81.5 over the first 5k steps, IQM -58.7 [-59.0,
-58.5] over the last 5k of 50k (VDN -62.9, `mappo_spread.py` -65.4; docs/multiagent.md).
The stop is 100k env steps because QMIX is at its best by then and diverges after: at
500k (seeds 0-2, this file's earlier stop) each seed's best 10k-step window came at 60k-77k
steps (-55.9/-55.7/-54.5), then the mean Q_tot ran away and the return fell below random's
(IQM -104.5 over the last iterations). Standardized rewards (`--set
training.standardize_rewards=True`) slow that decline (-67.5/-65.1 where these settings
had -84.5/-76.4 at 300k, seeds 2 and 0) without ending it. The mixer's gain dQ_tot/dQ_a
grows into the hundreds as it diverges; the bounded mixer (`--set
training.mixer=qmix_bounded`, normalized weights, gains summing to at most 3) did not
diverge: -44.5/-46.6 over the 10k steps up to 300k on seeds 2 and 0, still improving
(docs/multiagent.md, "Bounding the gain"). This file keeps the paper's mixer. Its 100k
over 3 seeds: docs/benchmarks.md.
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
    stop={metrics.ENV_STEPS_SAMPLED_LIFETIME: 100_000},  # its best: see the docstring
    checkpoint_every=20,
)
