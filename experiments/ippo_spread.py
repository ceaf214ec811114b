"""Independent PPO on MPE simple_spread: one policy per agent, nothing shared.

The same task and settings as `ppo_shared_spread.py` (three agents cover three landmarks,
25 steps, the team return is the sum over agents), but each agent trains its own policy
and value function on its own reward, so each policy sees a third of the data and the
other agents' learning makes its world non-stationary. Run both to compare sharing with
independence; `mappo_spread.py` (centralized critic) completes the set.

Expected: slower than the shared policy towards the same bar, a team return of -50 or
better (random actions: about -81) within 3M env steps. Sources: Terry et al. 2020,
"Revisiting parameter sharing in multi-agent deep RL", and Yu et al. 2022 (MAPPO) find
independent learners slower than shared ones on cooperative MPE tasks.

Measured here (docs/benchmarks.md, `python scripts/benchmark.py --only ippo_spread`, at
ppo_shared_spread's budget of 2M env steps, 3 seeds): slower at first, as expected, but
better at the budget. IQM -59.9 [95% interval -62.7, -54.6] (each seed's last 5
iterations: -62.7, -54.6, -62.4) against the shared policy's -66.5 [-69.6, -63.3] at the
same steps. The shared policy learns sooner (mean over seeds at 300k steps: -68.6
against -77.0), the two are level from 500k to 1M, and IPPO is ahead from 1.1M and still
rising at 2M (docs/benchmarks/ippo_spread.png) where the shared policy stopped gaining.
955 env steps/s, 2,098-2,136 s of training a seed. -50 not reached; 3M not measured.

(This replaces the issue's `ippo_waterworld.py`: PettingZoo 1.26 removed waterworld.)
"""

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent import independent

ENV = "mpe/simple_spread"

config = (
    PPOConfig()
    .environment(ENV)
    .multi_agent(**independent(ENV))  # policies "agent_0", "agent_1", "agent_2"
    .env_runners(
        # Sampling in the trainable's process: PPO samples and learns in turn, so a
        # remote env runner adds only the shipping of episodes (scale with --num-env-runners).
        num_env_runners=0,
        # MAPPO's 128 rollout threads: one forward pass acts for 384 agents, and each
        # iteration's 3,200 env steps are one whole 25-step episode per env.
        num_envs_per_env_runner=128,
    )
    .training(
        lr=7e-4,  # MAPPO's MPE value, as in ppo_shared_spread.py
        num_epochs=10,  # MAPPO's MPE value
        entropy_coeff=0.01,  # MAPPO's MPE value
        lambda_=0.95,  # MAPPO's MPE value
        train_batch_size_per_learner=3_200,  # env steps: 128 episodes of 25 steps
        minibatch_size=3_200,  # agent steps per policy: each policy's whole batch, MAPPO's one minibatch
        vf_clip_param=1_000.0,  # per-agent returns start near -27: the default 10 would clip the squared error flat
    )
    .rl_module(
        model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], fcnet_activation="relu")  # MAPPO's
    )
)

experiment = Experiment(
    config=config,
    stop={
        metrics.TEAM_RETURN_MEAN: -50,
        metrics.ENV_STEPS_SAMPLED_LIFETIME: 3_000_000,
    },
    checkpoint_every=20,
)
