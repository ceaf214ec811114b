"""RLlib's MultiAgentEnvRunner with its step counters logged once per `sample()` call.

RLlib logs 2 + 4 x agents values through its MetricsLogger (env steps; agent and module
steps per agent) and increments a Prometheus counter for every sub-env step. With
`ppo_shared_spread.py`'s 128 sub-envs of 3 agents that is ~1,800 `log_value` calls per
vector step, about 15% of sampling time in a py-spy profile. Here the counts add up in
plain dicts and go to the same metrics, with the same reductions, as one value each at
the end of `_sample`: what a result reports (a sum over the iteration, a lifetime sum and
its throughput) is unchanged; tests/test_multiagent_env_runner.py compares it with
RLlib's own runner. Only the bookkeeping is batched; sampling itself is RLlib's.

Where the registry has a batched version of the env (`envs.batched_multi_agent`: MPE
simple_spread, envs/spread_vector.py), the runner steps that instead of RLlib's
`SyncVectorMultiAgentEnv` of PettingZoo envs: the same task, one array step for all
sub-envs. Any other env, or option, keeps RLlib's env.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ray.rllib.callbacks.utils import make_callback
from ray.rllib.env.env_context import EnvContext
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
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


class BatchedCountsMultiAgentEnvRunner(MultiAgentEnvRunner):
    """`config.env_runners(env_runner_cls=BatchedCountsMultiAgentEnvRunner)`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._env_steps = 0
        self._episodes = 0
        self._agent_steps: Counter[str] = Counter()
        self._module_steps: Counter[Any] = Counter()  # keyed like RLlib: module_for()
        self._prometheus_env_steps = 0

    def make_env(self) -> None:
        env_context = EnvContext(
            dict(self.config.env_config),
            worker_index=self.worker_index,
            num_workers=self.config.num_env_runners,
            remote=self.config.remote_worker_envs,
        )
        batched = envs.batched_multi_agent(
            self.config.env, self.config.num_envs_per_env_runner, env_context
        )
        if batched is None:
            super().make_env()
            return
        # MultiAgentEnvRunner.make_env's steps around its make_vec call.
        if self.env is not None:
            self.env.close()
        self.env = batched
        self.num_envs = batched.num_envs
        self._needs_initial_reset = True
        make_callback(
            "on_environment_created",
            callbacks_objects=self._callbacks,
            callbacks_functions=self.config.callbacks_on_environment_created,
            kwargs=dict(
                env_runner=self,
                metrics_logger=self.metrics,
                env=self.env.unwrapped,
                env_context=env_context,
            ),
        )

    def _sample(self, **kwargs: Any) -> list[MultiAgentEpisode]:
        try:
            return super()._sample(**kwargs)
        finally:
            self._log_counts()

    def _increase_sampled_metrics(
        self, num_steps: int, next_obs: dict, episode: MultiAgentEpisode
    ) -> int:
        self._env_steps += num_steps
        self._episodes += int(episode.is_done)
        for agent_id in next_obs:
            self._agent_steps[str(agent_id)] += 1
            self._module_steps[episode.module_for(agent_id)] += 1
        return num_steps

    def _log_env_steps(self, metric: Any, num_steps: int) -> None:
        if metric is self._metrics_num_env_steps_sampled:
            self._prometheus_env_steps += num_steps
        else:
            super()._log_env_steps(metric, num_steps)

    def _log_counts(self) -> None:
        # The calls of MultiAgentEnvRunner._increase_sampled_metrics, with totals.
        self._log_count(
            NUM_ENV_STEPS_SAMPLED,
            NUM_ENV_STEPS_SAMPLED_LIFETIME,
            self._env_steps,
            with_throughput=True,
        )
        self._log_count(NUM_EPISODES, NUM_EPISODES_LIFETIME, self._episodes)
        for agent_id, steps in self._agent_steps.items():
            self._log_count(
                (NUM_AGENT_STEPS_SAMPLED, agent_id),
                (NUM_AGENT_STEPS_SAMPLED_LIFETIME, agent_id),
                steps,
            )
        for module_id, steps in self._module_steps.items():
            self._log_count(
                (NUM_MODULE_STEPS_SAMPLED, module_id),
                (NUM_MODULE_STEPS_SAMPLED_LIFETIME, module_id),
                steps,
            )
        if self._prometheus_env_steps:
            super()._log_env_steps(self._metrics_num_env_steps_sampled, self._prometheus_env_steps)
        self._env_steps = self._episodes = self._prometheus_env_steps = 0
        self._agent_steps.clear()
        self._module_steps.clear()

    def _log_count(self, key: Any, lifetime_key: Any, count: int, **lifetime: Any) -> None:
        """A count as RLlib logs it: summed per iteration and over the runner's lifetime
        (nothing when zero: RLlib logs per step, so no step, no value)."""
        if count:
            self.metrics.log_value(key, count, reduce="sum")
            self.metrics.log_value(lifetime_key, count, reduce="lifetime_sum", **lifetime)
