"""MASAC on SISL multiwalker: three bipedal walkers carry a package, each with its own
stochastic actor on its own observation, its own twin centralized critics over all three
walkers' observations and torques, and its own learned temperature.

The settings of `sac_multiwalker.py` (independent SAC) with centralized critics in place
of per-walker ones, so the two files compare the critic's input alone. The walkers play
as one RLlib agent (`joint`), so `episode_return_mean` is the team return, the sum over
the three walkers (a fallen package costs -100 per walker).

Expected: measured only at a stated budget, 12,000 env steps (the 10k steps before
learning, then 2k of learning), seeds 0-2 (docs/benchmarks.md, `python scripts/benchmark.py
--only masac_multiwalker`, 2026-11-29): team return IQM -313.2 [-317.5, -308.7], no
learning shows yet (sac_multiwalker.py at the same budget: -315.8 [-319.5, -308.4]). Its
own budget is not measured here: on 2 CPUs it trains at 10.5-10.7 env steps/s once
learning starts (4.96-5.49 with RLlib's replay buffer instead of replay from arrays),
about 5.5 hours for 200k steps; fused Adam (2026-11-30) made it 10.9-12.3 where the same
hour gave 9.6-10.0 without (docs/multiagent.md, "On two CPUs"). A GPU does not
shorten it: on an H200 machine its learner on the GPU ran 16.5 env steps/s against 14.9
on a CPU beside it, about 3.4 hours a seed; the time is in launching the update's many
small kernels (docs/multiagent.md, "On an H200"). Method: SAC (Haarnoja et al. 2018)
with MADDPG's centralized critics (Lowe et al. 2017), the MASAC of BenchMARL (Bettini et
al. 2024), except that a walker's actor loss takes the other walkers' torques from the
replay buffer (Lowe et al.'s eq. 5; BenchMARL samples them from their current actors);
settings from CleanRL's SAC, as in sac_multiwalker.py.
"""

from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent import independent
from rlsuite.multiagent.maddpg import MASACConfig, agent_policies, joint

ENV = "sisl/multiwalker"

config = (
    MASACConfig()
    .environment(**joint(ENV))  # all walkers as one RLlib agent, rewards kept apart
    .env_runners(num_env_runners=1)  # as sac_multiwalker.py
    .training(
        # One policy per walker, "walker_0" to "walker_2", as in sac_multiwalker.py.
        agent_policies=agent_policies(ENV, independent(ENV)),
        actor_lr=3e-4,  # CleanRL's SAC values, as in sac_multiwalker.py
        critic_lr=1e-3,
        alpha_lr=1e-3,
        target_entropy="auto",  # minus each walker's 4 torques
        tau=0.005,  # CleanRL's and SAC's value
        gamma=0.99,  # CleanRL's and SAC's value
        train_batch_size_per_learner=256,  # CleanRL's value
        replay_buffer_config={
            "type": "EpisodeReplayBuffer",  # uniform, as CleanRL's
            "capacity": 1_000_000,  # CleanRL's value
        },
        num_steps_sampled_before_learning_starts=10_000,  # as sac_multiwalker.py
    )
    .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[256, 256], fcnet_activation="relu"))
)

experiment = Experiment(
    config=config,
    stop={metrics.TEAM_RETURN_MEAN: 0, metrics.ENV_STEPS_SAMPLED_LIFETIME: 2_000_000},
    checkpoint_every=50,
)
