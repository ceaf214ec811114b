"""MASAC on SISL multiwalker: three bipedal walkers carry a package, each with its own
stochastic actor on its own observation, its own twin centralized critics over all three
walkers' observations and torques, and its own learned temperature.

The settings of `sac_multiwalker.py` (independent SAC) with centralized critics in place
of per-walker ones, so the two files compare the critic's input alone. The walkers play
as one RLlib agent (`joint`), so `episode_return_mean` is the team return, the sum over
the three walkers (a fallen package costs -100 per walker).

Expected: learning shows within 200k env steps. Measured on seeds 0-2 (2026-11-30 and
12-01, 2 vCPUs, 63-73 min of training each at 42-51 env steps/s; docs/multiagent.md,
"MASAC learns on multiwalker"): the mean team return of the episodes that ended in each
20k steps rose from -309 and -305 (random actions) to -136 and -71 over 180k-200k on
seeds 0 and 1; seed 2 only started to (-300 to -297); team return IQM over the last 20k
steps -168.2 [-300.9, -68.6]. The suite's PPO with one shared policy got -54.8 [-104.0,
-6.9] at the same 200k steps, at 6.7x the env steps/s (docs/multiagent.md, "PPO at equal
env steps"). At the benchmark table's 12k steps (2k of learning), seeds 0-2: -317.5
[-319.1, -315.0], no learning yet. A GPU does not shorten it: on an H200 machine (one
env) its learner on the GPU ran 16.5 env steps/s against 14.9 on a CPU beside it; the
time is in launching the update's many small kernels (docs/multiagent.md, "On an
H200"). Method: SAC (Haarnoja et al. 2018) with MADDPG's centralized critics (Lowe et al. 2017), the MASAC of BenchMARL (Bettini et
al. 2024), except that a walker's actor loss takes the other walkers' torques from the
replay buffer (Lowe et al.'s eq. 5; BenchMARL samples them from their current actors);
settings from CleanRL's SAC but for the replay ratio, as in sac_multiwalker.py.
"""

from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent import independent
from rlsuite.multiagent.maddpg import MASACConfig, agent_policies, joint

ENV = "sisl/multiwalker"

config = (
    MASACConfig()
    .environment(**joint(ENV))  # all walkers as one RLlib agent, rewards kept apart
    # 8 envs a sample, as sac_multiwalker.py: one update per 8 env steps, so 32 replayed
    # samples per env step (CleanRL's one update per step is 256; BenchMARL's off-policy
    # default about 21), at 4x the env steps/s of one env on 2 CPUs.
    .env_runners(num_env_runners=1, num_envs_per_env_runner=8)
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
