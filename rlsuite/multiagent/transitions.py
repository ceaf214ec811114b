"""Uniform replay of one-step transitions kept as arrays, and the training step that
feeds the learner batches from it: the default of MADDPG, MASAC, QMIX and VDN
(`transition_replay`).

Why not RLlib's `EpisodeReplayBuffer` alone: its `sample()` cuts each replayed step out
of its episode as a new `SingleAgentEpisode` in a Python loop, and the learner connector
then turns those 1,024 one-step episodes back into a batch. In a profile of
`maddpg_tag.py` on 2 CPUs (py-spy, 30 s after learning started) that was 42% of the
trial's time (sampling the buffer 31%, the learner connector 11%) and adding episodes
another 9%, for a batch of a few hundred kilobytes. Here each transition (o, a, r, o',
terminated, truncated) is a row of preallocated numpy arrays; a batch is one fancy index
per column, handed to the learner as a `MultiAgentBatch` with the columns RLlib's
connector would have made (`obs`, `new_obs`, `actions`, `rewards`, `terminateds`,
`truncateds`, `weights`), so the learner and its losses are unchanged.

What it does not do: prioritized replay, n-step returns and sequences for recurrent
modules. `training(transition_replay=None)`, the default of MADDPG, MASAC, QMIX and VDN,
uses it where RLlib's buffer would replay the same (a uniform `EpisodeReplayBuffer`,
n_step 1, no stateful module, no learner connector of the config's own, which the ready
batches would skip) and RLlib's buffers otherwise; True insists, False never. Its
checkpointing (RLlib's `store_buffer_in_checkpoints`): buffer_checkpoint.py.
"""

from __future__ import annotations

from typing import Any

from ray.rllib.algorithms.algorithm_config import NotProvided
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.execution.rollout_ops import synchronous_parallel_sample
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch
from ray.rllib.utils.metrics import (
    ALL_MODULES,
    ENV_RUNNER_RESULTS,
    ENV_RUNNER_SAMPLING_TIMER,
    LEARNER_RESULTS,
    LEARNER_UPDATE_TIMER,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    REPLAY_BUFFER_ADD_DATA_TIMER,
    REPLAY_BUFFER_SAMPLE_TIMER,
    SYNCH_WORKER_WEIGHTS_TIMER,
    TD_ERROR_KEY,
    TIMERS,
)

from rlsuite.multiagent.buffer_checkpoint import NO_STORED_BUFFER, BufferCheckpointMixin
from rlsuite.multiagent.transition_buffer import TransitionReplayBuffer

UNIFORM_BUFFER = "EpisodeReplayBuffer"


def uses_transition_replay(config: Any, stateful_module: bool = False) -> bool:
    """Whether `config`'s algorithm replays through `TransitionReplayBuffer`; ValueError
    where `transition_replay=True` asks for it and RLlib's buffer would replay otherwise.
    `stateful_module`: the built RLModule keeps a state (known only once it is built)."""
    choice = getattr(config, "transition_replay", None)
    if choice is False:
        return False
    buffer = config.replay_buffer_config.get("type")
    model = config.model_config if isinstance(config.model_config, dict) else {}
    reason = (
        f"replays uniformly, as {UNIFORM_BUFFER} does, not as a {buffer}"
        if buffer != UNIFORM_BUFFER
        else f"replays one-step transitions, not n_step={config.n_step}"
        if config.n_step not in (1, None)
        else "replays single steps, not the sequences a recurrent module needs"
        if model.get("use_lstm") or stateful_module
        # The batches go to the learner ready-made: no learner connector runs on them.
        else "runs no learner connector, and this config sets one"
        if config._learner_connector is not None
        else None
    )
    if reason and choice:
        raise ValueError(f"transition_replay {reason}; set training(transition_replay=False)")
    return reason is None


class TransitionReplaySettings:
    """`training(transition_replay=None | True | False)` and its check in `validate()`;
    put before RLlib's DQNConfig or SACConfig in a config's bases."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.transition_replay: bool | None = None

    def training(self, *, transition_replay: bool | Any | None = NotProvided, **kwargs: Any) -> Any:
        super().training(**kwargs)  # type: ignore[misc]
        if transition_replay is not NotProvided:
            self.transition_replay = transition_replay
        return self

    def validate(self) -> None:
        try:
            arrays = uses_transition_replay(self)
        except ValueError as error:
            arrays = False  # _value_error only logs where validation is turned off
            self._value_error(str(error))  # type: ignore[attr-defined]
        if getattr(self, "store_buffer_in_checkpoints", False) and not arrays:
            self._value_error(NO_STORED_BUFFER)  # type: ignore[attr-defined]
        super().validate()  # type: ignore[misc]


class TransitionReplayMixin(BufferCheckpointMixin):
    """Put before RLlib's DQN or SAC in an Algorithm's bases: where the config
    `uses_transition_replay`, the replay buffer is a `TransitionReplayBuffer` of its
    capacity and the training step learns from its batches."""

    def setup(self, config: Any) -> None:
        super().setup(config)  # type: ignore[misc]
        algo: Any = self
        # DQN's setup asked an env runner whether the module keeps a state.
        stateful = bool(getattr(algo, "_module_is_stateful", False))
        if uses_transition_replay(algo.config, stateful):
            capacity = algo.config.replay_buffer_config["capacity"]
            # Seeded here: the suite's seeding callback ran in setup, on RLlib's buffer.
            algo.local_replay_buffer = TransitionReplayBuffer(capacity, seed=algo.config.seed)
        elif algo.config.store_buffer_in_checkpoints:  # a stateful module, found only now
            raise ValueError(NO_STORED_BUFFER)

    def training_step(self) -> Any:
        algo: Any = self
        if isinstance(algo.local_replay_buffer, TransitionReplayBuffer):
            return train_from_transitions(algo)
        return super().training_step()  # type: ignore[misc]


def train_from_transitions(algorithm: Any) -> None:
    """RLlib DQN's training step (`DQN._training_step_new_api_stack`: sample, store,
    replay, learn, sync weights) with the replay from `TransitionReplayBuffer` and the
    batch handed to the learner ready-made."""
    config = algorithm.config
    buffer: TransitionReplayBuffer = algorithm.local_replay_buffer
    from ray.rllib.algorithms.dqn.dqn import calculate_rr_weights

    store_weight, sample_and_train_weight = map(int, calculate_rr_weights(config))
    metrics = algorithm.metrics
    for _ in range(store_weight):
        with metrics.log_time((TIMERS, ENV_RUNNER_SAMPLING_TIMER)):
            sampled_now: Any = synchronous_parallel_sample(
                worker_set=algorithm.env_runner_group,
                concat=True,
                sample_timeout_s=config.sample_timeout_s,
                _uses_new_env_runners=True,
                _return_metrics=True,
            )
        episodes, runner_results = sampled_now
        metrics.aggregate(runner_results, key=ENV_RUNNER_RESULTS)
        with metrics.log_time((TIMERS, REPLAY_BUFFER_ADD_DATA_TIMER)):
            buffer.add(episodes)
    sampled = metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
    if sampled < config.num_steps_sampled_before_learning_starts:
        return
    for _ in range(sample_and_train_weight):
        with metrics.log_time((TIMERS, REPLAY_BUFFER_SAMPLE_TIMER)):
            columns = buffer.sample(config.total_train_batch_size)
        batch = MultiAgentBatch(
            {DEFAULT_MODULE_ID: SampleBatch(columns)}, env_steps=config.total_train_batch_size
        )
        timesteps = {
            NUM_ENV_STEPS_SAMPLED_LIFETIME: sampled,
            NUM_AGENT_STEPS_SAMPLED_LIFETIME: metrics.peek(
                (ENV_RUNNER_RESULTS, NUM_AGENT_STEPS_SAMPLED_LIFETIME), default={}
            ),
        }
        with metrics.log_time((TIMERS, LEARNER_UPDATE_TIMER)):
            results = algorithm.learner_group.update(batch=batch, timesteps=timesteps)
            for result in results:  # per-step TD errors are for prioritized replay only
                for module_results in result.values():
                    module_results.pop(TD_ERROR_KEY, None)
            metrics.aggregate(results, key=LEARNER_RESULTS)
    with metrics.log_time((TIMERS, SYNCH_WORKER_WEIGHTS_TIMER)):
        algorithm.env_runner_group.sync_weights(
            from_worker_or_learner_group=algorithm.learner_group,
            policies=set(results[0].keys()) - {ALL_MODULES},
            global_vars=None,
            inference_only=True,
        )
