"""Independent SAC on SISL multiwalker: three bipedal walkers carry a package, each with
its own policy and critics, continuous torques for four joints.

Expected: a team return above 0 (walkers keep the package up and move forward; a fallen
package costs -100 per walker) within about 2M env steps. Gupta et al. (2017), the
benchmark's origin, report independent learners reaching positive returns; PettingZoo's
reward scaling differs from theirs, so treat the number as a bar, not a published score.
Not yet verified with this config (no full run made): on 2 CPUs it trains at 9.5 env
steps/s once learning starts (one round, 2026-11-30), one update of all three walkers per
8 env steps, about 6 hours for 200k steps (docs/multiagent.md, "On two CPUs"); with one
env and an update per env step it was 1.7-1.9. Measured at a stated budget instead,
12,000 env steps (10k before learning, 2k of learning), seeds 0-2 (docs/benchmarks.md,
`python scripts/benchmark.py --only sac_multiwalker`, 2026-11-30): team return IQM -273.2
[-315.3, -192.3], per seed -312.0, -315.3 and -192.3 over its last 5 iterations: too few
steps of learning to call a trend. masac_multiwalker.py, the same settings with
centralized critics, learns within 200k steps on both seeds run.
"""

from ray.rllib.algorithms.sac import SACConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent import independent

ENV = "sisl/multiwalker"

config = (
    SACConfig()
    .environment(ENV)
    .multi_agent(**independent(ENV))  # policies "walker_0", "walker_1", "walker_2"
    # 8 envs a sample: one update per 8 env steps, 32 replayed samples per env step
    # (CleanRL's one update per step is 256; BenchMARL's off-policy default about 21).
    .env_runners(num_env_runners=1, num_envs_per_env_runner=8)
    .training(
        actor_lr=3e-4,  # CleanRL's SAC values, as in sac_halfcheetah.py
        critic_lr=1e-3,
        alpha_lr=1e-3,
        lr=None,
        target_entropy="auto",
        tau=0.005,
        train_batch_size_per_learner=256,
        target_network_update_freq=1,
        replay_buffer_config={
            "type": "MultiAgentEpisodeReplayBuffer",  # one buffer, sampled per policy
            "capacity": 1_000_000,
        },
        num_steps_sampled_before_learning_starts=10_000,
    )
    .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[256, 256], fcnet_activation="relu"))
)

experiment = Experiment(
    config=config,
    stop={metrics.TEAM_RETURN_MEAN: 0, metrics.ENV_STEPS_SAMPLED_LIFETIME: 2_000_000},
    checkpoint_every=50,
)
