"""Optuna's TPE over PPO's learning rate, entropy coefficient, clip parameter and minibatch
size on CartPole-v1.

What the searcher is for: with a fixed budget of trials, TPE (Bergstra et al. 2011) spends
its later trials where the earlier ones scored well, where random search keeps sampling
the whole space. The first trial runs the values below (a known good point:
`ppo_cartpole.py`'s until 2026-11-28); ten more are sampled at random before TPE models
the results.

Budget: 24 trials, two at a time, each 100k env steps; the metric is each trial's mean
return at that budget. In the benchmark below the best trials trained 26-71 s each, at
2,107 env steps/s over the three sweeps (two trials sharing the 2 vCPUs). `scripts/bench_search.py` compares TPE with random search on this task
(docs/search.md).

Measured (docs/benchmarks.md, `python scripts/benchmark.py --only optuna_ppo_cartpole`,
sweeps seeded 0-2, 1,966 s for the three): the best trial's return over its last 5
iterations, IQM 486.6 [95% interval 467.8, 497.2] (467.8, 494.8, 497.2). From the same
sweeps' trial results (not columns of the table; docs/experiments.md): the best was the
24th, 17th and 4th trial started, and the known good first point scored 198.9, 480.1 and 478.5 in
the three sweeps: the same values, different seeds, so one trial of a point says little.
"""

from ray import tune
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, Optuna, metrics

config = (
    PPOConfig()
    .environment("classic/cartpole")
    .env_runners(num_env_runners=0, num_envs_per_env_runner=16)
    .training(
        lr=1e-3,  # searched
        num_epochs=6,  # RLlib's tuned CartPole value
        vf_loss_coeff=0.01,  # the value loss shares the layers: keep it from dominating
        train_batch_size_per_learner=4000,
        minibatch_size=256,  # searched
    )
    .rl_module(
        model_config=DefaultModelConfig(
            fcnet_hiddens=[32],  # CartPole needs no more (RLlib's tuned example)
            fcnet_activation="linear",
            vf_share_layers=True,
        )
    )
)

experiment = Experiment(
    config=config,
    # Return at a fixed step budget: a return threshold would stop the good trials at the
    # same value and leave the searcher nothing to rank them by.
    stop={metrics.ENV_STEPS_SAMPLED_LIFETIME: 100_000},
    search={
        "lr": tune.loguniform(1e-4, 3e-3),
        "entropy_coeff": tune.uniform(0.0, 0.02),
        "clip_param": tune.uniform(0.1, 0.4),
        # Ascending, two at most smoke's train batch of 128 (--smoke keeps the two smallest).
        "minibatch_size": tune.choice([64, 128, 256, 512]),
    },
    searcher=Optuna(
        max_concurrent=2,  # one trial per CPU
        points_to_evaluate=[
            {"lr": 1e-3, "entropy_coeff": 0.0, "clip_param": 0.3, "minibatch_size": 256}
        ],
        seed=0,
    ),
    num_samples=24,
    checkpoint_every=5,
)
