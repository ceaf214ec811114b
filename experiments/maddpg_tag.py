"""MADDPG on MPE simple_tag (predator-prey): three slower adversaries learn to catch a
faster prey among two obstacles; one policy per team (`by_type`: "adversary" for the
three hunters, "agent" for the prey), each with its own centralized critic over every
agent's observation and action. Discrete actions through Gumbel-softmax actors.

The agents play as one RLlib agent (`joint`), so `episode_return_mean` is the sum over
all four agents (each tag gives every adversary +10 and the prey -10, and the prey pays
for leaving the arena): a rough sign of how often the hunters tag, not either team's
return; each team's is logged beside it (`policy_return_mean/adversary`,
`policy_return_mean/agent`). Each agent's critic trains on its own reward.

Expected (measured at 1M steps, seed 0, two pairs of runs; docs/experiments.md): 0.45-0.46
tags per greedy episode against its own prey; independent-DDPG hunters (`--set
"training.local_critics=['adversary']"`) trained the same way tag that prey 0.31-0.35
times an episode (`rlsuite.evaluate ... --policy adversary=OTHER_RUN`, 1,000 episodes
each): 1.31x and 1.47x; over seeds 0-2, DDPG hunters tag the same seed's MADDPG prey 0.29 /
0.17 / 0.22 times against MADDPG's 0.45 / 0.40 / 0.22, all six hunter actors saturated
(docs/multiagent.md). openai/maddpg's penalty on the actors' squared outputs keeps them
from saturating: with `--set training.actor_output_reg=0.001` (seeds 1 and 2, 1M steps)
the hunters tag the same seed's unpenalized prey 3.53 and 5.23 times an episode and PPO's
prey 2.99 and 2.39 times (PPO's own hunters 2.58 and 1.43), and PPO's hunters tag the
penalized prey 1.03 and 0.62 times; seed 0 alike (2.92 against the unpenalized prey, 3.70
against PPO's, whose own hunters tag it 1.11 times; PPO's hunters 0.31). With
the penalty on both sides the paper's comparison did not hold on seed 0: DDPG hunters
tagged the penalized MADDPG prey 1.66 times, MADDPG's 1.51. Not yet the default: the
table's runs were made without it. PPO per team (`ppo_tag.py`, an earlier one-seed run at 1M steps,
not the table's) trains better hunters: they tag this run's prey 2.24 times an episode;
this run's hunters tag PPO's prey 0.77 times. Over seeds 0-2 (docs/benchmarks.md): team
return IQM 6.7 [4.9, 7.8]; 0.448, 0.401 and 0.222 tags an episode against their own prey
(the seeds differ by 2x); that earlier PPO run's hunters tag each seed's prey 1.90, 1.90
and 2.60 times. Against ppo_tag.py's 3 benchmark seeds, seed by seed: PPO's hunters tag the
same seed's prey 0.83 / 2.50 / 2.61 times, these hunters PPO's prey 0.69 / 1.00 / 0.27
(ppo_tag.py's docstring, docs/multiagent.md).

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
