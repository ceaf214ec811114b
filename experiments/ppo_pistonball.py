"""PPO with one CNN policy shared by the 20 pistons of PettingZoo's pistonball (pixels).

Each piston sees an 84x84 grey crop of the screen around itself (the registry's pixel
preprocessing) and moves up or down (continuous action in [-1, 1]); all pistons get the
same reward, 100 times the fraction of the distance to the left wall that the ball
travelled in the step, minus 0.1 per step. The reported return is the team return, the sum
over the 20 pistons: a ball carried to the wall in 100 steps scores about 20 x (100 - 10)
= 1,800; random pistons score about -90 (PettingZoo's documented average; not measured
here). RLlib's frame-stacking connectors give the policy the last 3 frames, so it can see
where the ball is going.

Expected: the team return climbs from about -90 towards the wall-reaching range (above
1,000) within 2M env steps. Sources: the settings are those of PettingZoo's Stable-Baselines3
pistonball tutorial (`tutorials/SB3/pistonball/sb3_pistonball_vector.py`: 3 stacked 84x84
grey frames, one shared CNN policy, tuned PPO values below), whose note says training needs
"the order of 2 million" steps. Not verified with this config (no full run made): on 2
CPUs it trains at 7-12 env steps/s (6.9 over seeds 0-2 on 2026-11-29; 12 in a first
iteration on 2026-11-28), 4.6 hours or more for 200k steps and 46 or more for 2M
(docs/multiagent.md, "On two CPUs"), so the run needs a GPU machine. Measured at a stated
budget of 6,144 env steps (6 iterations, about 49 episodes), seeds 0-2: team return IQM
-114.6 [-122.3, -105.9] over the last 5 iterations, iterations swinging from -274 to +74 with
no trend: no learning shows yet at that budget (docs/benchmarks.md).
"""

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module.frame_stacking import FrameStackingEnvToModule
from ray.rllib.connectors.learner.frame_stacking import FrameStackingLearner
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent import shared

ENV = "butterfly/pistonball"
FRAMES = 3  # the SB3 tutorial's frame stack: one frame shows where the ball is, not where it goes

config = (
    PPOConfig()
    .environment(ENV, clip_actions=True)
    .multi_agent(**shared(ENV))  # identical pistons: one policy "shared", 20x the data per step
    .env_runners(
        num_env_runners=1,
        num_envs_per_env_runner=4,  # the tutorial's 4 vector envs; one forward pass for 80 pistons
        env_to_module_connector=lambda env, spaces=None, device=None: FrameStackingEnvToModule(
            num_frames=FRAMES, multi_agent=True
        ),
    )
    .learners(
        learner_connector=lambda obs_space, act_space: FrameStackingLearner(
            num_frames=FRAMES, multi_agent=True
        ),
    )
    .training(
        lr=6.2e-4,  # SB3 tutorial's tuned values from here on
        gamma=0.95,
        lambda_=0.99,
        clip_param=0.3,
        entropy_coeff=0.09,
        vf_loss_coeff=0.042,
        grad_clip=0.9,
        vf_clip_param=1_000.0,  # per-piston returns reach ~90: RLlib's default 10 would clip the value loss flat (SB3 does not clip it)
        num_epochs=5,
        train_batch_size_per_learner=1_024,  # env steps: the tutorial's 256 steps x 4 envs (20,480 piston steps)
        minibatch_size=256,  # piston steps, as the tutorial's batch_size
    )
    .rl_module(
        model_config=DefaultModelConfig(
            # SB3's CnnPolicy: the Nature-DQN CNN (Mnih et al. 2015), unpadded as SB3's (RLlib
            # pads to "same"), then 512 units; its convolutions take 6.9M multiply-adds per
            # observation (3 stacked 84x84 frames), RLlib's default 84x84 CNN's 122M (its last
            # layer is 256 11x11).
            conv_filters=[[32, 8, 4, "valid"], [64, 4, 2, "valid"], [64, 3, 1, "valid"]],
            head_fcnet_hiddens=[512],
            head_fcnet_activation="relu",
            vf_share_layers=True,  # SB3's CnnPolicy shares the CNN between policy and value
        )
    )
)

experiment = Experiment(
    config=config,
    stop={
        metrics.TEAM_RETURN_MEAN: 1_000,
        metrics.ENV_STEPS_SAMPLED_LIFETIME: 2_000_000,
    },
    checkpoint_every=20,
)
