"""MAPPO on MPE simple_spread: a shared actor on each agent's own observation, a centralized
critic on the global state (all three agents' observations, concatenated).

The task of `ppo_shared_spread.py` (three agents cover three landmarks without colliding,
25 steps, team return = sum over agents); only the critic differs, so the two files
compare a centralized with a decentralized value function. Checkpoints hold one plain
actor ("shared") that acts on one agent's observation; the critic trains on the learner.

Expected: the team return rises from about -81 for uniformly random actions (-80.3 over
800 episodes, `python scripts/bench_multiagent.py`) to -50 or better within 2M env steps.
Source for method and settings: Yu et al. 2022, "The Surprising Effectiveness of PPO in
Cooperative Multi-Agent Games" (MAPPO; settings from marlbenchmark/on-policy
`train_mpe_spread.sh`); their spread gives each agent the team reward without PettingZoo's
`local_ratio`, so their figures do not carry over. Measured here (docs/benchmarks.md,
`python scripts/benchmark.py --only mappo_spread`, 2026-11-25): over seeds 0-2 an IQM of
-56.4 [95% interval -60.5, -53.6] (each seed's last 5 iterations: -53.6, -60.5, -55.1);
seed 0 met the -50 stop at 1.59M env steps, seeds 1 and 2 did not within 2M. Most of the
gain comes by about 150k steps. At 64k env steps (the regression gate's record): IQM
-63.2 [-65.6, -61.9].
"""

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent import mappo, shared

ENV = "mpe/simple_spread"

config = mappo(  # centralized critic: the value function sees every agent's observation
    PPOConfig()
    .environment(ENV)
    .multi_agent(**shared(ENV))  # one actor and one critic for the three identical agents
    .env_runners(
        # Sampling in the trainable's process: PPO samples and learns in turn, so a
        # remote env runner adds only the shipping of episodes (scale with --num-env-runners).
        num_env_runners=0,
        # MAPPO's 128 rollout threads: one forward pass acts for 384 agents, and each
        # iteration's 3,200 env steps are one whole 25-step episode per env.
        num_envs_per_env_runner=128,
    )
    .training(
        lr=7e-4,  # MAPPO's MPE value (actor and critic lr alike)
        num_epochs=10,  # MAPPO's ppo_epoch on MPE
        entropy_coeff=0.01,  # MAPPO's MPE value
        lambda_=0.95,  # MAPPO's gae_lambda
        grad_clip=10.0,  # MAPPO's max_grad_norm
        train_batch_size_per_learner=3_200,  # env steps: 128 episodes of 25, as MAPPO's 128 rollout threads
        minibatch_size=3_200,  # agent steps; MAPPO takes one minibatch, RLlib caps it at the train batch
        vf_clip_param=1_000.0,  # per-agent returns start near -27; MAPPO normalizes values instead of clipping
    )
    .rl_module(
        model_config=DefaultModelConfig(
            fcnet_hiddens=[64, 64],  # MAPPO's MPE network, for actor and critic
            fcnet_activation="relu",  # MAPPO's --use_ReLU
        )
    )
)

experiment = Experiment(
    config=config,
    stop={
        metrics.TEAM_RETURN_MEAN: -50,
        metrics.ENV_STEPS_SAMPLED_LIFETIME: 2_000_000,
    },
    checkpoint_every=20,
)
