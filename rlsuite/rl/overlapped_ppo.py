"""`OverlappedPPOConfig`: RLlib's PPO whose env runners sample the next batch while the
learner learns on this one.

    config = OverlappedPPOConfig().environment("atari/pong").env_runners(num_env_runners=14)

RLlib's PPO runs an iteration as two phases in series: every env runner samples, then the
learner updates while the runners wait. On a GPU machine with 14 runners, PPO Pong spent
about two thirds of each iteration sampling and one third learning, with the runners idle
for that third (docs/performance.md). Here the sample requests for iteration k+1 go out as
soon as iteration k's episodes are in, before the update, so the two phases overlap. The
price is one iteration of policy lag: iteration k+1's episodes come from the weights of
iteration k-1's update. PPO's clipped ratio is taken against the behaviour policy's
log-probabilities that the episodes carry (RLlib's `ACTION_LOGP`), so the lag is corrected
for the policy term, as in Sample Factory's asynchronous PPO (Petrenko et al. 2020) and
RLlib's APPO; GAE's value targets use the learner's current critic, as RLlib's PPO does.

Everything else is RLlib's PPO: the learner, its connectors, losses, metrics, checkpoints.
RLlib's new API stack has no such option for PPO, which is why this subclass exists.
`overlap_sampling=False`, or sampling in the trial's own process (`num_env_runners=0`),
runs PPO's own training step unchanged.
"""

from __future__ import annotations

from typing import Any

from ray.rllib.algorithms.ppo import PPO, PPOConfig
from ray.rllib.core import ALL_MODULES
from ray.rllib.core.learner.learner_group import LearnerGroup
from ray.rllib.env.env_runner import EnvRunner
from ray.rllib.env.env_runner_group import EnvRunnerGroup
from ray.rllib.utils.from_config import NotProvided
from ray.rllib.utils.metrics import (
    ENV_RUNNER_RESULTS,
    ENV_RUNNER_SAMPLING_TIMER,
    LEARNER_RESULTS,
    LEARNER_UPDATE_TIMER,
    NUM_AGENT_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_MODULE_STEPS_TRAINED_LIFETIME,
    SYNCH_WORKER_WEIGHTS_TIMER,
    TIMERS,
)
from ray.rllib.utils.metrics.metrics_logger import MetricsLogger

SAMPLE_TAG = "overlapped_ppo_sample"


class OverlappedPPOConfig(PPOConfig):
    """PPO's config plus `training(overlap_sampling=True)` (the default here)."""

    def __init__(self, algo_class: type | None = None) -> None:
        super().__init__(algo_class=algo_class or OverlappedPPO)
        self.overlap_sampling = True
        # RLlib's gather of the runners' connector states after each iteration queues behind
        # the sample request in flight: with RLlib's 10 s it would drop their states (a
        # MeanStdFilter's statistics) whenever a sample outlasts the update by more.
        self.sync_filters_on_rollout_workers_timeout_s = self.sample_timeout_s

    def training(self, *, overlap_sampling: bool | Any = NotProvided, **kwargs: Any) -> Any:
        super().training(**kwargs)
        if overlap_sampling is not NotProvided:
            self.overlap_sampling = overlap_sampling
        return self

    def env_runners(self, **kwargs: Any) -> Any:
        super().env_runners(**kwargs)
        # As patient with the connector-state gather as with a sample (see __init__).
        self.sync_filters_on_rollout_workers_timeout_s = max(
            self.sync_filters_on_rollout_workers_timeout_s, self.sample_timeout_s
        )
        return self

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.overlap_sampling, bool):
            self._value_error(
                f"overlap_sampling must be True or False, not {self.overlap_sampling!r}"
            )
        if (
            self.overlap_sampling
            and self.sync_filters_on_rollout_workers_timeout_s < self.sample_timeout_s
        ):
            self._value_error(
                "overlap_sampling gathers the runners' connector states behind a sample "
                "request: set config.sync_filters_on_rollout_workers_timeout_s (RLlib has no "
                f"builder for it) to at least sample_timeout_s={self.sample_timeout_s}, or set "
                "sample_timeout_s with .env_runners(), which raises it"
            )
        if self.overlap_sampling and self.max_requests_in_flight_per_env_runner != 1:
            # With more than one sample request queued on a runner, the policy lag grows
            # beyond the one iteration that the clipped ratio is meant to absorb.
            self._value_error(
                "overlap_sampling keeps one sample request in flight per env runner: set "
                "env_runners(max_requests_in_flight_per_env_runner=1), or "
                "training(overlap_sampling=False)"
            )


class OverlappedPPO(PPO):
    """PPO with each iteration's sampling overlapped with the previous iteration's update."""

    @classmethod
    def get_default_config(cls) -> OverlappedPPOConfig:
        return OverlappedPPOConfig()

    def training_step(self) -> None:
        if not self._overlaps():
            return super().training_step()
        config, metrics, learners = self._config, self._metrics, self._learners
        with metrics.log_time((TIMERS, ENV_RUNNER_SAMPLING_TIMER)):
            episodes, env_runner_results = self._collect_batch()
            if not episodes:
                return None
            metrics.aggregate(env_runner_results, key=ENV_RUNNER_RESULTS)
            # The next batch is sampled with the weights the runners hold now, while the
            # learner learns on this one: the overlap.
            self._request_samples()
        # From here on as RLlib's `PPO.training_step` (ray 2.60), which cannot be reused
        # because it samples synchronously in the same method.
        with metrics.log_time((TIMERS, LEARNER_UPDATE_TIMER)):
            learner_results = learners.update(
                episodes=episodes,
                timesteps={
                    NUM_ENV_STEPS_SAMPLED_LIFETIME: metrics.peek(
                        (ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME)
                    ),
                    NUM_MODULE_STEPS_TRAINED_LIFETIME: metrics.peek(
                        (LEARNER_RESULTS, ALL_MODULES, NUM_MODULE_STEPS_TRAINED_LIFETIME),
                        default=0,
                    ),
                },
                num_epochs=config.num_epochs,
                minibatch_size=config.minibatch_size,
                shuffle_batch_per_epoch=config.shuffle_batch_per_epoch,
            )
            metrics.aggregate(learner_results, key=LEARNER_RESULTS)
        with metrics.log_time((TIMERS, SYNCH_WORKER_WEIGHTS_TIMER)):
            # Fire-and-forget (RLlib's default timeout of 0): each runner applies the new
            # weights after the sample request it is running, in the order the requests
            # were sent, so its next request samples with them.
            self._runners.sync_weights(
                from_worker_or_learner_group=learners,
                policies=sorted(set(learner_results[0].keys()) - {ALL_MODULES}),
                inference_only=True,
            )
        return None

    def restore_from_path(self, path: Any, *args: Any, **kwargs: Any) -> None:
        self._drop_samples_in_flight()
        super().restore_from_path(path, *args, **kwargs)

    def set_state(self, state: Any) -> None:
        self._drop_samples_in_flight()
        super().set_state(state)

    def _drop_samples_in_flight(self) -> None:
        # A sample request sent before a restore would hand the next update episodes of the
        # weights the restore replaces: wait for it and drop it, so the next request samples
        # with the restored weights (RLlib's sync after the restore goes first).
        runners = getattr(self, "env_runner_group", None)  # None while RLlib builds it
        if runners is not None:
            runners.fetch_ready_async_reqs(
                tags=SAMPLE_TAG, timeout_seconds=self._config.sample_timeout_s
            )

    @property
    def _config(self) -> PPOConfig:
        assert isinstance(self.config, PPOConfig)
        return self.config

    @property
    def _metrics(self) -> MetricsLogger:
        assert self.metrics is not None
        return self.metrics

    @property
    def _learners(self) -> LearnerGroup:
        assert self.learner_group is not None
        return self.learner_group

    @property
    def _runners(self) -> EnvRunnerGroup:
        assert self.env_runner_group is not None
        return self.env_runner_group

    def _overlaps(self) -> bool:
        return bool(
            # A plain PPOConfig pointed at this class runs as RLlib's PPO.
            getattr(self._config, "overlap_sampling", False)
            and self._config.enable_env_runner_and_connector_v2
            and self._runners.num_remote_env_runners() > 0
        )

    def _request_samples(self) -> None:
        # A runner still busy with a request is skipped (one request in flight each).
        self._runners.foreach_env_runner_async(_sample_with_metrics, tag=SAMPLE_TAG)

    def _collect_batch(self) -> tuple[list[Any], list[dict[str, Any]]]:
        """At least `total_train_batch_size` env steps from the runners' requests, asking
        again where a runner's batch came in and more are needed (the first iteration, a
        restarted runner). Like RLlib's synchronous sampling, a wait longer than
        `sample_timeout_s` with nothing back ends the iteration with what came."""
        episodes: list[Any] = []
        results: list[dict[str, Any]] = []
        steps = 0
        by_agent = self._config.count_steps_by == "agent_steps"
        while steps < self._config.total_train_batch_size:
            self._request_samples()
            ready: list[tuple[int, Any]] = self._runners.fetch_ready_async_reqs(
                tags=SAMPLE_TAG, timeout_seconds=self._config.sample_timeout_s
            )
            if not ready:
                break
            for _runner_id, (runner_episodes, runner_metrics) in ready:
                episodes.extend(runner_episodes)
                results.append(runner_metrics)
                steps += _steps_sampled(runner_metrics, by_agent)
        return episodes, results


def _sample_with_metrics(runner: EnvRunner) -> tuple[Any, dict[str, Any]]:
    return runner.sample(), runner.get_metrics()


def _steps_sampled(runner_metrics: dict[str, Any], by_agent: bool) -> int:
    """A runner's sample in the unit PPO fills its batch with (RLlib's synchronous
    sampling counts the same way)."""
    if by_agent:
        return sum(int(n) for n in runner_metrics.get(NUM_AGENT_STEPS_SAMPLED, {}).values())
    return int(runner_metrics.get(NUM_ENV_STEPS_SAMPLED, 0))
