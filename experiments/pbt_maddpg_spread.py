"""Population Based Training of MADDPG on MPE simple_spread: four trials of
`maddpg_spread.py`'s setup; every 100 iterations (about 20k env steps) the worst quarter
copies a best trial's checkpoint and perturbs the actor's and the critic's learning rates
(Jaderberg et al. 2017). The suite's PBT check compares each learner's optimizers with the
trial's config after every iteration, so a perturbation the restored optimizer state
would undo fails the trial instead.

Measured over populations seeded 0-2 at 500k env steps a trial (docs/benchmarks.md,
`python scripts/benchmark.py --only pbt_maddpg_spread`): the best trial's team return IQM
-43.0 [-46.4, -40.3], 10 exploits in all; no better than single `maddpg_spread.py` runs,
whose seeds averaged -39.0 to -44.4 over 380k-390k steps. The file's own 1M stop is not
measured.
"""

from ray import tune
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import PBT, Experiment, metrics
from rlsuite.multiagent import shared
from rlsuite.multiagent.maddpg import MADDPGConfig, agent_policies, joint

ENV = "mpe/simple_spread"
ENV_CONFIG = {"continuous_actions": True}  # MADDPG's deterministic actors need Box actions
LEARNING_RATES = tune.loguniform(1e-3, 3e-2)  # around Lowe et al.'s 1e-2

config = (
    MADDPGConfig()
    .environment(**joint(ENV, ENV_CONFIG))  # all agents as one RLlib agent, rewards kept apart
    .env_runners(num_env_runners=0, num_envs_per_env_runner=8)
    .training(
        agent_policies=agent_policies(ENV, shared(ENV, ENV_CONFIG), ENV_CONFIG),
        actor_lr=1e-2,  # Lowe et al.'s Adam learning rate
        critic_lr=1e-2,  # Lowe et al.'s Adam learning rate
        gamma=0.95,  # Lowe et al.'s value
        tau=0.01,  # Lowe et al.'s Polyak rate
        grad_clip=0.5,  # openai/maddpg's grad_norm_clipping
        actor_output_reg=0.0,  # as maddpg_spread.py, whose runs were measured without it
        train_batch_size_per_learner=1_024,  # Lowe et al.'s batch (transitions)
        training_intensity=10.24,  # openai/maddpg: 1,024 transitions every 100 env steps
        num_steps_sampled_before_learning_starts=25_600,  # openai/maddpg's value
        replay_buffer_config={"type": "EpisodeReplayBuffer", "capacity": 1_000_000},
    )
    .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], fcnet_activation="relu"))
)

experiment = Experiment(
    config=config,
    stop={metrics.ENV_STEPS_SAMPLED_LIFETIME: 1_000_000},
    search={"actor_lr": LEARNING_RATES, "critic_lr": LEARNING_RATES},
    scheduler=PBT(
        hyperparam_mutations={"actor_lr": LEARNING_RATES, "critic_lr": LEARNING_RATES},
        perturbation_interval=100,
    ),
    num_samples=4,
    checkpoint_every=100,  # PBT exploits checkpoints: keep them on its cadence
)
