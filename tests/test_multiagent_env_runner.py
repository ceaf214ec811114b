"""The batched-counts env runner reports what RLlib's MultiAgentEnvRunner reports, and
the launcher samples multi-agent experiments with it."""

from __future__ import annotations

from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.utils.metrics import (
    NUM_AGENT_STEPS_SAMPLED,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES,
    NUM_EPISODES_LIFETIME,
    NUM_MODULE_STEPS_SAMPLED,
    NUM_MODULE_STEPS_SAMPLED_LIFETIME,
)

from rlsuite import envs
from rlsuite.launcher.loader import load_experiment
from rlsuite.launcher.tuner import param_space
from rlsuite.multiagent import independent
from rlsuite.multiagent.env_runner import BatchedCountsMultiAgentEnvRunner
from tests.helpers import ROOT

ENV = "mpe/simple_spread"
# RLlib's keys, listed here rather than taken from the runner under test.
COUNTS = (
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES,
    NUM_EPISODES_LIFETIME,
    NUM_AGENT_STEPS_SAMPLED,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_MODULE_STEPS_SAMPLED,
    NUM_MODULE_STEPS_SAMPLED_LIFETIME,
)


def _counts(runner_class: type[MultiAgentEnvRunner], samples: list[int]) -> list[dict]:
    """The step and episode counts `get_metrics()` reports after each `sample()` call."""
    envs.register(ENV)
    config = (
        PPOConfig()
        .environment(ENV, env_config={"max_episode_steps": 10})
        .multi_agent(**independent(ENV))  # one module per agent: per-module counts differ
        .env_runners(num_envs_per_env_runner=3)
        .debugging(seed=0)
    )
    runner = runner_class(config=config)
    reported = []
    try:
        for timesteps in samples:
            runner.sample(num_timesteps=timesteps, random_actions=True)
            metrics: dict[str, Any] = runner.get_metrics()
            reported.append({key: _values(metrics.get(key)) for key in COUNTS})
    finally:
        runner.stop()
    return reported


def _values(stats: Any) -> Any:
    """What a Stats object (or a dict of them, one per agent or module) holds."""
    if isinstance(stats, dict):
        return {key: _values(value) for key, value in stats.items()}
    return None if stats is None else stats.peek()


def test_counts_match_rllibs_runner() -> None:
    # 25 then 40 env steps: episodes end inside the second call and across the two.
    samples = [25, 40]
    ours = _counts(BatchedCountsMultiAgentEnvRunner, samples)
    rllib = _counts(MultiAgentEnvRunner, samples)
    assert ours == rllib
    # get_metrics() reports what was logged since its last call.
    for counts, timesteps in zip(ours, samples, strict=True):
        assert counts[NUM_ENV_STEPS_SAMPLED] >= timesteps
        assert counts[NUM_ENV_STEPS_SAMPLED_LIFETIME] == counts[NUM_ENV_STEPS_SAMPLED]
        # Every sub-env step is a step of each of the three agents and their modules.
        agent_steps = 3 * counts[NUM_ENV_STEPS_SAMPLED]
        assert sum(counts[NUM_AGENT_STEPS_SAMPLED].values()) == agent_steps
        assert sum(counts[NUM_MODULE_STEPS_SAMPLED_LIFETIME].values()) == agent_steps
    assert ours[1][NUM_EPISODES] > 0
    assert set(ours[1][NUM_MODULE_STEPS_SAMPLED]) == {"agent_0", "agent_1", "agent_2"}


def test_the_launcher_samples_multi_agent_experiments_with_it() -> None:
    multi_agent = load_experiment(ROOT / "experiments" / "ppo_shared_spread.py")
    assert param_space(multi_agent)["env_runner_cls"] is BatchedCountsMultiAgentEnvRunner
    single_agent = load_experiment(ROOT / "experiments" / "ppo_cartpole.py")
    assert param_space(single_agent)["env_runner_cls"] is None  # RLlib's SingleAgentEnvRunner
