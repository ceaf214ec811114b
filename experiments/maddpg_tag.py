"""MADDPG on MPE simple_tag (predator-prey): three slower adversaries learn to catch a
faster prey among two obstacles; one policy per team (`by_type`: "adversary" for the
three hunters, "agent" for the prey), each with its own centralized critic over every
agent's observation and action. Discrete actions through Gumbel-softmax actors.

The agents play as one RLlib agent (`joint`), so `episode_return_mean` is the sum over
all four agents (each tag gives every adversary +10 and the prey -10, and the prey pays
for leaving the arena): a rough sign of how often the hunters tag, not either team's
return; each team's is logged beside it (`policy_return_mean/adversary`,
`policy_return_mean/agent`). Each agent's critic trains on its own reward.

Expected (docs/benchmarks.md, `python scripts/benchmark.py --only maddpg_tag`, seeds 0-2
at 1M env steps, 2026-11-27): team return IQM 18.9 [10.4, 26.9]; greedy, the hunters tag their own
run's prey 1.46 / 1.12 / 1.34 times an episode (`rlsuite.evaluate
results/benchmarks/maddpg_tag --trial T --episodes 1000`), their actors unsaturated
(`python scripts/actor_saturation.py`: 4-5 of the 5 actions used). That is with openai/
maddpg's penalty on the actors' squared outputs (`actor_output_reg`, 1e-3, the config's
default since that day). Without it (`--set training.actor_output_reg=0`) every hunter
actor saturated onto one to three actions and the table's earlier row was a team return
IQM of 6.7 [4.9, 7.8], 0.45 / 0.40 / 0.22 tags an episode (docs/multiagent.md). Runs of
the penalized config the same day (`--set training.actor_output_reg=0.001`, seeds 0-2)
tagged PPO's (`ppo_tag.py`) prey more often than PPO's own hunters did, and PPO's hunters
tagged these MADDPG prey 2.3x-3.6x less often than PPO's own prey (docs/multiagent.md). Lowe et al.'s comparison, independent-DDPG
hunters (`--set "training.local_critics=['adversary']"`) against the same MADDPG prey, did
not hold with the penalty on any of seeds 0-2 (DDPG's hunters tagged 1.10x, 1.31x and 1.03x
as often as MADDPG's, 1,000 greedy episodes each); without it MADDPG's hunters tagged
1.5x-2.4x as often on two seeds of three, an effect of the saturation.

Method and settings: Lowe et al. 2017, "Multi-Agent Actor-Critic for Mixed
Cooperative-Competitive Environments" (predator-prey, their appendix and openai/maddpg's
`train.py` defaults).
"""

from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent import by_type
from rlsuite.multiagent.maddpg import MADDPGConfig, agent_policies, joint

ENV = "mpe/simple_tag"

config = (
    MADDPGConfig()
    .environment(**joint(ENV))  # all agents as one RLlib agent, rewards kept apart
    .env_runners(
        num_env_runners=0,  # sampling in the trainable's process: a remote runner only adds latency
        num_envs_per_env_runner=8,  # one forward pass acts in 8 episodes
    )
    .training(
        # One actor and one critic per team: ("adversary",) * 3 + ("agent",).
        agent_policies=agent_policies(ENV, by_type(ENV)),
        actor_lr=1e-2,  # Lowe et al.'s Adam learning rate
        critic_lr=1e-2,  # Lowe et al.'s Adam learning rate
        gamma=0.95,  # Lowe et al.'s value
        tau=0.01,  # Lowe et al.'s Polyak rate, applied after every update
        grad_clip=0.5,  # openai/maddpg's grad_norm_clipping
        train_batch_size_per_learner=1_024,  # Lowe et al.'s batch (transitions)
        # openai/maddpg updates on 1,024 transitions every 100 env steps.
        training_intensity=10.24,
        num_steps_sampled_before_learning_starts=25_600,  # openai/maddpg: batch x episode length
        replay_buffer_config={
            "type": "EpisodeReplayBuffer",  # uniform, as Lowe et al.'s
            "capacity": 1_000_000,  # Lowe et al.'s value
        },
    )
    .rl_module(
        model_config=DefaultModelConfig(
            fcnet_hiddens=[64, 64],  # Lowe et al.'s two 64-unit layers
            fcnet_activation="relu",  # Lowe et al.'s value
        )
    )
)

experiment = Experiment(
    config=config,
    stop={metrics.ENV_STEPS_SAMPLED_LIFETIME: 1_000_000},  # 40,000 episodes of 25 steps
    checkpoint_every=20,
)
