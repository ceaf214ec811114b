"""Result keys of RLlib and Ray Tune under stable names.

Experiment files, stop criteria, schedulers, reports and tests use these constants,
never raw strings, so a Ray upgrade that renames a key is one edit here. Each value is
the flattened key Tune uses for stop criteria and schedulers and the tag suffix that
TensorBoard shows (``ray/tune/<key>``).
"""

from __future__ import annotations

from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.utils.metrics import (
    ENV_RUNNER_RESULTS,
    ENV_RUNNER_SAMPLING_TIMER,
    EPISODE_AGENT_RETURN_MEAN,
    EPISODE_MODULE_RETURN_MEAN,
    EVALUATION_RESULTS,
    LEARNER_RESULTS,
    LEARNER_UPDATE_TIMER,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_TRAINED_LIFETIME,
    NUM_EPISODES,
    NUM_EPISODES_LIFETIME,
    NUM_MODULE_STEPS_TRAINED_LIFETIME,
    TIMERS,
)
from ray.rllib.utils.metrics import (
    EPISODE_LEN_MEAN as _EPISODE_LEN_MEAN,
)
from ray.rllib.utils.metrics import (
    EPISODE_RETURN_MAX as _EPISODE_RETURN_MAX,
)
from ray.rllib.utils.metrics import (
    EPISODE_RETURN_MEAN as _EPISODE_RETURN_MEAN,
)
from ray.tune.result import TIME_TOTAL_S as _TIME_TOTAL_S
from ray.tune.result import TRAINING_ITERATION as _TRAINING_ITERATION

ALL_MODULES = "__all_modules__"

TRAINING_ITERATION = _TRAINING_ITERATION
TIME_TOTAL_S = _TIME_TOTAL_S

EPISODE_RETURN_MEAN = f"{ENV_RUNNER_RESULTS}/{_EPISODE_RETURN_MEAN}"
EPISODE_RETURN_MAX = f"{ENV_RUNNER_RESULTS}/{_EPISODE_RETURN_MAX}"
EPISODE_LEN_MEAN = f"{ENV_RUNNER_RESULTS}/{_EPISODE_LEN_MEAN}"
EPISODES_LIFETIME = f"{ENV_RUNNER_RESULTS}/{NUM_EPISODES_LIFETIME}"
# Episodes that ended in this iteration; with none, Ray 2.60 reports the return mean as NaN.
EPISODES_THIS_ITERATION = f"{ENV_RUNNER_RESULTS}/{NUM_EPISODES}"
ENV_STEPS_SAMPLED_LIFETIME = f"{ENV_RUNNER_RESULTS}/{NUM_ENV_STEPS_SAMPLED_LIFETIME}"
ENV_STEPS_TRAINED_LIFETIME = f"{LEARNER_RESULTS}/{ALL_MODULES}/{NUM_ENV_STEPS_TRAINED_LIFETIME}"
# Rows the learner's updates went through, every epoch counted: RLlib logs each minibatch's
# length here, while ENV_STEPS_TRAINED_LIFETIME adds the whole batch's env steps per
# minibatch (Ray 2.60), so it grows with the number of minibatches.
MODULE_STEPS_TRAINED_LIFETIME = (
    f"{LEARNER_RESULTS}/{ALL_MODULES}/{NUM_MODULE_STEPS_TRAINED_LIFETIME}"
)
EVALUATION_RETURN_MEAN = f"{EVALUATION_RESULTS}/{ENV_RUNNER_RESULTS}/{_EPISODE_RETURN_MEAN}"

# Multi-agent runs. EPISODE_RETURN_MEAN is then the team return: RLlib's multi-agent env
# runner logs `MultiAgentEpisode.get_return()`, the sum of every agent's rewards over the
# episode (TEAM_RETURN_MEAN names it so). Per agent and per policy (RLModule; agents that
# share a policy add up) the mean returns sit under these prefixes, one key per id.
TEAM_RETURN_MEAN = EPISODE_RETURN_MEAN
# The env runners' own keys (what a callback logs, e.g. MADDPG's per-team returns).
AGENT_RETURN_MEAN_KEY = EPISODE_AGENT_RETURN_MEAN
POLICY_RETURN_MEAN_KEY = EPISODE_MODULE_RETURN_MEAN
AGENT_RETURN_MEAN_PREFIX = f"{ENV_RUNNER_RESULTS}/{AGENT_RETURN_MEAN_KEY}"
POLICY_RETURN_MEAN_PREFIX = f"{ENV_RUNNER_RESULTS}/{POLICY_RETURN_MEAN_KEY}"
_PER_ID = {
    "agent_return_mean": AGENT_RETURN_MEAN_PREFIX,
    "policy_return_mean": POLICY_RETURN_MEAN_PREFIX,
}


def agent_return_mean(agent_id: str) -> str:
    """Key of one agent's mean episode return (`env_runners/agent_episode_returns_mean/<id>`)."""
    return f"{AGENT_RETURN_MEAN_PREFIX}/{agent_id}"


def policy_return_mean(module_id: str) -> str:
    """Key of one policy's mean episode return, summed over the agents it controls."""
    return f"{POLICY_RETURN_MEAN_PREFIX}/{module_id}"


# Games (self-play, rlsuite.multiagent.selfplay). WIN_RATE: the learning policy's share of
# won training games against its opponent pool (draws are not wins), logged by the env
# runners per iteration. The others are measured by the self-play callback every few
# iterations in whole games against fixed opponents (greedy actions, half the games moving
# first); SNAPSHOTS counts the frozen copies of the learner made so far (0: the pool is
# still the random player), EXPLOITER_SNAPSHOTS those made of main exploiters (`league.py`,
# logged where there are exploiters). POOL_WIN_RATES: the win rate per pool member in the
# iteration's training games; OPPONENT_SHARES: each member's share of the draws (PFSP).
# WINS_TAKEN and THREATS_BLOCKED come from the same games against fixed opponents: the
# learner's share of the positions with a win on the board in which it took one, and of
# those with a single opponent win to block in which it blocked (matches.Tactics).
WIN_RATE_KEY = "win_rate"
SELFPLAY_RESULTS = "selfplay"
WIN_RATE = f"{ENV_RUNNER_RESULTS}/{WIN_RATE_KEY}"
SNAPSHOTS = f"{SELFPLAY_RESULTS}/snapshots"
EXPLOITER_SNAPSHOTS = f"{SELFPLAY_RESULTS}/exploiter_snapshots"
POOL_WIN_RATES_KEY = "pool_win_rates"
POOL_WIN_RATES = f"{ENV_RUNNER_RESULTS}/{POOL_WIN_RATES_KEY}"
OPPONENT_SHARES = f"{SELFPLAY_RESULTS}/opponent_shares"
WIN_RATE_VS_RANDOM = f"{SELFPLAY_RESULTS}/win_rate_vs_random"
WIN_RATE_VS_HEURISTIC = f"{SELFPLAY_RESULTS}/win_rate_vs_heuristic"
WIN_RATE_VS_CAREFUL = f"{SELFPLAY_RESULTS}/win_rate_vs_careful"
WINS_TAKEN = f"{SELFPLAY_RESULTS}/wins_taken"
THREATS_BLOCKED = f"{SELFPLAY_RESULTS}/threats_blocked"


def win_rate_vs(opponent: str) -> str:
    """Key of the win rate against a fixed opponent of `rlsuite.multiagent.opponents`."""
    return f"{SELFPLAY_RESULTS}/win_rate_vs_{opponent}"


# Throughput: env steps sampled per second and samples the learners consumed per second.
ENV_STEPS_PER_SECOND = (
    f"{ENV_RUNNER_RESULTS}/{NUM_ENV_STEPS_SAMPLED_LIFETIME}_throughput/throughput_since_last_reduce"
)
LEARNER_SAMPLES_PER_SECOND = f"{LEARNER_RESULTS}/{ALL_MODULES}/num_env_steps_trained_throughput"
# Where an iteration's time goes: seconds spent sampling and updating the learner (RLlib
# smooths them over iterations).
SAMPLING_TIME_S = f"{TIMERS}/{ENV_RUNNER_SAMPLING_TIMER}"
LEARNING_TIME_S = f"{TIMERS}/{LEARNER_UPDATE_TIMER}"


def learner_metric(name: str, module_id: str = DEFAULT_MODULE_ID) -> str:
    """Key of a learner statistic (a loss, the learning rate) of one RLModule."""
    return f"{LEARNER_RESULTS}/{module_id}/{name}"


POLICY_LOSS = learner_metric("policy_loss")
VF_LOSS = learner_metric("vf_loss")
TOTAL_LOSS = learner_metric("total_loss")
QF_LOSS = learner_metric("qf_loss")
ENTROPY = learner_metric("entropy")
LEARNING_RATE = learner_metric("default_optimizer_learning_rate")

# Supervised runs (`rlsuite.supervised.loop`): one result per epoch, reported by the Ray
# Train workers (rank 0's values; losses and accuracy are averaged over all workers).
TRAIN_LOSS = "train/loss"
VALIDATION_LOSS = "validation/loss"
VALIDATION_ACCURACY = "validation/accuracy"
SAMPLES_PER_SECOND = "train/samples_per_second"
"""Training samples per second of the whole run (all workers), over the epoch's steps."""
WORKERS = "train/workers"
"""Ray Train workers that trained the epoch: an elastic run's count changes with the nodes."""
TRAIN_LEARNING_RATE = "train/learning_rate"
"""The optimizer's learning rate at the end of the epoch."""
EPOCH = "epoch"
"""Epochs completed; continues across `--resume` and PBT exploits (Tune's
training_iteration counts the results of this trial)."""
SUPERVISED_METRICS = (
    TRAIN_LOSS,
    VALIDATION_LOSS,
    VALIDATION_ACCURACY,
    SAMPLES_PER_SECOND,
    TRAIN_LEARNING_RATE,
    WORKERS,
    EPOCH,
)

# The metrics in which "reaching the stop value" means the task was solved (`--as-test`).
RETURN_METRICS = (
    EPISODE_RETURN_MEAN,
    EVALUATION_RETURN_MEAN,
    VALIDATION_ACCURACY,
    WIN_RATE_VS_RANDOM,
    WIN_RATE_VS_HEURISTIC,
    WIN_RATE_VS_CAREFUL,
)

# Short names accepted on the command line (`--stop episode_return_mean=150`).
BY_NAME: dict[str, str] = {
    "training_iteration": TRAINING_ITERATION,
    "time_total_s": TIME_TOTAL_S,
    "episode_return_mean": EPISODE_RETURN_MEAN,
    "team_return_mean": TEAM_RETURN_MEAN,
    "episode_return_max": EPISODE_RETURN_MAX,
    "episode_len_mean": EPISODE_LEN_MEAN,
    "env_steps": ENV_STEPS_SAMPLED_LIFETIME,
    "num_env_steps_sampled_lifetime": ENV_STEPS_SAMPLED_LIFETIME,
    "evaluation_return_mean": EVALUATION_RETURN_MEAN,
    "validation_accuracy": VALIDATION_ACCURACY,
    "validation_loss": VALIDATION_LOSS,
    "train_loss": TRAIN_LOSS,
    "epoch": EPOCH,
    "win_rate": WIN_RATE,
    "win_rate_vs_random": WIN_RATE_VS_RANDOM,
    "win_rate_vs_heuristic": WIN_RATE_VS_HEURISTIC,
    "win_rate_vs_careful": WIN_RATE_VS_CAREFUL,
    "snapshots": SNAPSHOTS,
}

STOP_KEYS = frozenset(BY_NAME.values())
# Stops that every run reaches: a budget, where the others are targets it may never reach.
BUDGET_KEYS = frozenset({TRAINING_ITERATION, TIME_TOTAL_S, ENV_STEPS_SAMPLED_LIFETIME, EPOCH})

# RLlib's old API stack's result names, absent from the new stack's results. Tune only
# warns when a stop or scheduler metric is missing, so a file carried over from an old
# script would never stop or rank on them: they are refused, naming the new one.
OLD_API_STACK_NAMES = {
    "episode_reward_mean": "episode_return_mean",
    "episode_reward_max": "episode_return_max",
    "sampler_results/episode_reward_mean": "episode_return_mean",
    "env_runners/episode_reward_mean": "episode_return_mean",
    "evaluation/episode_reward_mean": "evaluation_return_mean",
    "evaluation/sampler_results/episode_reward_mean": "evaluation_return_mean",
    "timesteps_total": "env_steps",
    "num_env_steps_sampled": "env_steps",
    "num_agent_steps_sampled": "env_steps",
}


def short_name(key: str) -> str:
    """The command line's name for a full result key (what `resolve` maps back to it), so a
    message names a stop as the user wrote it; a key with no short name comes back as is."""
    for name, prefix in _PER_ID.items():
        if key.startswith(f"{prefix}/"):
            return f"{name}/{key.removeprefix(f'{prefix}/')}"
    return next((name for name, full in BY_NAME.items() if full == key), key)


def resolve(name: str) -> str | None:
    """Full result key for a short name or a full key; None when unknown. Per-agent and
    per-policy returns take an id: `agent_return_mean/agent_0`, `policy_return_mean/shared`."""
    if name in STOP_KEYS:
        return name
    prefix, sep, some_id = name.rpartition("/")
    if sep and some_id and (prefix in _PER_ID.values() or prefix in _PER_ID):
        return f"{_PER_ID.get(prefix, prefix)}/{some_id}"
    return BY_NAME.get(name)
