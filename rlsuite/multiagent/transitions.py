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
batches would skip) and RLlib's buffers otherwise; True insists, False never.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import tree
from ray.rllib.algorithms.algorithm_config import NotProvided
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
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

WEIGHTS = "weights"  # importance weights, all 1: the column prioritized replay would set
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
            uses_transition_replay(self)
        except ValueError as error:
            self._value_error(str(error))  # type: ignore[attr-defined]
        super().validate()  # type: ignore[misc]


class TransitionReplayMixin:
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

    def training_step(self) -> Any:
        algo: Any = self
        if isinstance(algo.local_replay_buffer, TransitionReplayBuffer):
            return train_from_transitions(algo)
        return super().training_step()  # type: ignore[misc]


class TransitionReplayBuffer:
    """FIFO ring of one-step transitions; uniform sampling with replacement, as RLlib's
    `EpisodeReplayBuffer` samples timesteps."""

    def __init__(self, capacity: int, seed: int | None = None) -> None:
        self.capacity = int(capacity)
        self.rng = np.random.default_rng(seed)
        self._columns: dict[str, list[np.ndarray]] | None = None
        self._structure: Any = None  # the observation's nesting (JointEnv's is a dict)
        self._next = 0
        self.added = 0

    def __len__(self) -> int:
        return min(self.added, self.capacity)

    def add(self, episodes: Iterable[SingleAgentEpisode]) -> None:
        for episode in episodes:
            if len(episode):
                columns, structure = _transitions(episode)
                self._structure = structure
                self._add_rows(columns)

    def sample(self, batch_size: int) -> dict[str, Any]:
        """`batch_size` transitions drawn uniformly (with replacement), as columns."""
        assert self._columns is not None and len(self), "sample() before any add()"
        rows = self.rng.integers(len(self), size=batch_size)
        picked = {name: [array[rows] for array in arrays] for name, arrays in self._columns.items()}
        batch = {name: arrays[0] for name, arrays in picked.items() if name not in _NESTED}
        for name in _NESTED:
            batch[name] = tree.unflatten_as(self._structure, picked[name])
        batch[WEIGHTS] = np.ones(batch_size, np.float32)
        return batch

    def get_state(self) -> dict[str, Any]:
        """The stored rows, oldest first (RLlib's Checkpointable API). RLlib 2.60's new
        stack keeps no replay buffer in its checkpoints, its own buffers included: a
        resumed run refills the buffer from new samples."""
        order = (self._next - len(self) + np.arange(len(self))) % self.capacity
        columns = self._columns or {}
        return {
            "columns": {name: [a[order] for a in arrays] for name, arrays in columns.items()},
            "structure": self._structure,
            "added": self.added,
        }

    def set_state(self, state: dict[str, Any]) -> None:
        self._columns, self._next = None, 0
        self._structure = state["structure"]
        if state["columns"]:
            self._add_rows(state["columns"])
        self.added = state["added"]

    def _add_rows(self, columns: dict[str, list[np.ndarray]]) -> None:
        if self._columns is None:
            self._columns = {
                name: [np.empty((self.capacity, *a.shape[1:]), a.dtype) for a in arrays]
                for name, arrays in columns.items()
            }
        count = len(columns[Columns.ACTIONS][0])
        for start in range(0, count, self.capacity):  # a chunk longer than the buffer wraps
            stop = min(start + self.capacity, count)
            slots = (self._next + np.arange(stop - start)) % self.capacity
            for name, arrays in columns.items():
                for stored, new in zip(self._columns[name], arrays, strict=True):
                    stored[slots] = new[start:stop]
            self._next = int((slots[-1] + 1) % self.capacity)
        self.added += count


_NESTED = (Columns.OBS, Columns.NEXT_OBS)


def _transitions(episode: SingleAgentEpisode) -> tuple[dict[str, list[np.ndarray]], Any]:
    """An episode chunk's T steps as flat columns (nested observations flattened), and
    the observations' nesting."""
    observations = _stacked(episode.get_observations())  # T + 1 of them
    steps = len(episode)
    terminated = np.zeros(steps, bool)
    truncated = np.zeros(steps, bool)
    terminated[-1], truncated[-1] = episode.is_terminated, episode.is_truncated
    flat = tree.flatten(observations)
    columns = {
        Columns.OBS: [leaf[:-1] for leaf in flat],
        Columns.NEXT_OBS: [leaf[1:] for leaf in flat],
        Columns.ACTIONS: [np.asarray(episode.get_actions())],
        Columns.REWARDS: [np.asarray(episode.get_rewards(), np.float32)],
        Columns.TERMINATEDS: [terminated],
        Columns.TRUNCATEDS: [truncated],
    }
    return columns, tree.map_structure(lambda _: None, observations)


def _stacked(observations: Any) -> Any:
    """Observations as arrays with a leading time axis (a list of them stacked)."""
    if isinstance(observations, list):
        return tree.map_structure(lambda *leaves: np.stack(leaves), *observations)
    return observations


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
