"""PPO on MPE simple_tag (predator-prey), one policy per team: the on-policy baseline beside
`maddpg_tag.py`, on the same task for the same 1M env steps.

Three slower adversaries hunt a faster prey among two obstacles (25-step episodes). `by_type`
gives the hunters one shared policy ("adversary") and the prey its own ("agent"); each
learns from its own agents' rewards with its own value function, with no centralized
critic: independent PPO per team, as BenchMARL's and MARLlib's IPPO baselines on MPE.
`episode_return_mean` sums all four agents' rewards (each tag gives every hunter +10 and the
prey -10); each team's return is logged beside it (`policy_return_mean/adversary`,
`policy_return_mean/agent`).

Measured over seeds 0-2 at 1M env steps (docs/benchmarks.md, `python scripts/benchmark.py
--only ppo_tag`, 1,223-1,506 s of training a seed, 834 env steps/s): team return IQM 25.8
[18.0, 37.5] (maddpg_tag's 18.9 [10.4, 26.9]; 6.7 before its output penalty). From the
same runs' result.json (`policy_return_mean/*`; not columns of the table), the hunters'
team return (exploring, mean over the 50k steps up to 400k / 1M) went 66.8 -> 34.7 and
77.1 -> 47.1 on seeds 0 and 2 while their prey's rose (-28.2 -> -17.7, -32.7 -> -21.1): the
prey learned to escape; seed 1's 67.5 -> 76.7. Each
seed against maddpg_tag's earlier benchmark run of the same seed (without the actors' output
penalty, the row since replaced), 1,000 greedy episodes, tags per episode (a hunter's return
/ 10; `rlsuite.evaluate RUN --trial T --policy adversary=PPO_TRIAL`, or `agent=`): PPO's
hunters tag MADDPG's prey 0.83 / 2.50 / 2.61 times, MADDPG's own hunters 0.45 / 0.40 / 0.22;
against PPO's prey PPO's hunters 1.11 / 2.58 / 1.43, MADDPG's 0.69 / 1.00 / 0.27. So PPO
trains the better hunters in every seed than that saturated MADDPG; with the penalty,
MADDPG's default since, MADDPG's hunters and prey beat these in seeds 0-2
(docs/multiagent.md); the saturated MADDPG's prey are tagged less than PPO's by MADDPG's
hunters in every seed, by PPO's hunters in seed 0 and more in seed 2 (seed 1 within the
noise: standard errors about 0.08; docs/multiagent.md). An earlier run of seed 0 gave PPO
against PPO 1.84 and 2.24 against MADDPG's seed-0 prey of that day: runs of one seed differ
that much here. The settings are ippo_spread's (MAPPO's MPE values), so the two MPE PPO
baselines differ only in the task.
"""

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent import by_type

ENV = "mpe/simple_tag"

config = (
    PPOConfig()
    .environment(ENV)
    .multi_agent(**by_type(ENV))  # policies "adversary" (three hunters) and "agent" (the prey)
    .env_runners(
        # Sampling in the trainable's process: PPO samples and learns in turn, so a
        # remote env runner adds only the shipping of episodes (scale with --num-env-runners).
        num_env_runners=0,
        # MAPPO's 128 rollout threads: each iteration's 3,200 env steps are one whole
        # 25-step episode per env.
        num_envs_per_env_runner=128,
    )
    .training(
        lr=7e-4,  # MAPPO's MPE value
        num_epochs=10,  # MAPPO's MPE value
        entropy_coeff=0.01,  # MAPPO's MPE value
        lambda_=0.95,  # MAPPO's MPE value
        train_batch_size_per_learner=3_200,  # env steps: 128 episodes of 25 steps
        # Agent steps per minibatch and policy: the prey's whole batch. The hunters' 9,600 rows
        # make three, and RLlib's MiniBatchCyclicIterator runs until every policy has seen
        # its rows num_epochs times: 30 updates an iteration, so the prey cycles through its
        # batch 30 times to the hunters' 10 (RLlib refuses a minibatch above the 3,200).
        minibatch_size=3_200,
        # Each tag is worth +10 to every hunter: returns reach tens, and the default 10 would
        # clip the value function's squared error flat.
        vf_clip_param=1_000.0,
    )
    .rl_module(
        model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], fcnet_activation="relu")  # MAPPO's
    )
)

experiment = Experiment(
    config=config,
    stop={metrics.ENV_STEPS_SAMPLED_LIFETIME: 1_000_000},  # maddpg_tag's budget
    checkpoint_every=20,
)
