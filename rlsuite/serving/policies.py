"""RL checkpoints served: `POST /act` with observations, answered with actions.

`ServedPolicy` acts as RLlib's env runners do (`rlsuite.evaluation.acting`): the
checkpoint's env-to-module connectors, one forward pass of the RLModule(s), the
module-to-env connectors. A batch of requests is a vector env: one episode per
observation, all through the connectors in one call, so batching changes no action.

Sessions: a request with `"session_id"` continues that session's episode (frame stacks,
recurrent state and previous actions live in it, as in an env runner); `"reset": true`
starts it anew (send it with the first observation after the env's reset). Requests
without a session are one-step episodes. Sessions live in the replica that made them, the
least recently used dropped past `MAX_SESSIONS` (fewer for large observations:
`SESSION_BYTES`); where the policy keeps state from step to
step (`session_state`), a session the replica does not hold is refused, not started afresh.

Self-play checkpoints map one seat to a pool member drawn per episode (`OpponentPool`):
served, every agent is the learner's, the policy the run trained.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.connectors.env_to_module import MeanStdFilter
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from rlsuite.evaluation.acting import ConnectedPolicy
from rlsuite.evaluation.multiagent import MultiAgentPolicy
from rlsuite.evaluation.rl import restore_policy
from rlsuite.multiagent.pool import OpponentPool
from rlsuite.serving import inputs
from rlsuite.serving.inputs import BadRequest
from rlsuite.serving.sessions import KEEP_STEPS, Session, session_limit

SINGLE_EXAMPLE = '{"observations": [[0.0, 0.1, 0.0, -0.1]]}'
MULTI_EXAMPLE = '{"observations": {"agent_0": [...], "agent_1": [...]}}'
# RLlib's default env-to-module connectors (AlgorithmConfig.build_env_to_module_connector).
DEFAULT_ENV_TO_MODULE = frozenset(
    {
        "AddObservationsFromEpisodesToBatch",
        "AddTimeDimToBatchAndZeroPad",
        "AddStatesFromEpisodesToBatch",
        "AgentToModuleMapping",
        "BatchIndividualItems",
        "NumpyToTensor",
    }
)
# Connectors that read only an episode's newest observation. Any other may read earlier
# steps (FrameStacking, PrevActionsPrevRewards, a custom one), which a session keeps.
PER_STEP_ENV_TO_MODULE = DEFAULT_ENV_TO_MODULE | {"FlattenObservations", "MeanStdFilter"}


@dataclass(frozen=True)
class Step:
    """One observation to act on: of one agent, or of several (a multi-agent dict)."""

    observation: Any
    session_id: str | None = None
    reset: bool = False


class ServedPolicy:
    """A checkpoint's policy behind `/act`."""

    route = "/act"

    def __init__(self, checkpoint: Path, explore: bool) -> None:
        self.policy: ConnectedPolicy = restore_policy(checkpoint)
        self.explore = explore
        self.multi_agent = isinstance(self.policy, MultiAgentPolicy)
        self.observation_space = self.policy.env_to_module.input_observation_space
        self.action_space = self.policy.env_to_module.input_action_space
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.max_sessions = session_limit(self.observation_space)
        self.session_state = session_state(self.policy)
        self.learner, self.mapping = _agent_mapping(self.policy)
        for connector in self.policy.env_to_module.connectors:
            if isinstance(connector, MeanStdFilter):
                # Statistics moved by one client's observations would change the actions
                # of all others: they stay as training left them (RLlib has no setter).
                connector._update_stats = False

    def describe(self) -> dict[str, Any]:
        kind = "multi-agent policy" if self.multi_agent else "policy"
        learner = {"policy": self.learner} if self.learner else {}
        return {"kind": kind, "route": self.route, **learner}

    def parse(self, body: bytes, content_type: str) -> list[Step]:
        request = inputs.json_object(body)
        session_id, reset = inputs.session(request)
        if inputs.ends_session(request):
            self.sessions.pop(str(session_id), None)
            return []
        known = session_id is None or reset or session_id in self.sessions
        if not known and self.session_state:  # a fresh episode would act on a lost history
            raise BadRequest(
                f'unknown session {session_id!r} (never started here, or dropped as the least recently used of {self.max_sessions:,}); send "reset": true with its first observation to start one'
            )
        example = MULTI_EXAMPLE if self.multi_agent else SINGLE_EXAMPLE
        given = inputs.field(request, "observations", example)
        if self.multi_agent:
            return [Step(self._agents(given), session_id, reset)]
        return single_agent_steps(given, self.observation_space, session_id, reset)

    def _agents(self, given: Any) -> dict[str, Any]:
        if not isinstance(given, dict) or not given:
            raise BadRequest(
                f'"observations" must map agent ids to observations; send e.g. {MULTI_EXAMPLE}'
            )
        spaces = self.observation_space.spaces
        unknown = sorted(set(given) - set(spaces))
        if unknown:
            raise BadRequest(
                f"unknown agent id {unknown[0]!r}; this policy acts for {', '.join(sorted(spaces))}"
            )
        return {a: inputs.observation(o, spaces[a], f"observations.{a}") for a, o in given.items()}

    def answer(self, results: list[Any]) -> dict[str, Any]:
        """The response to one request from the results of its steps."""
        if not results:  # `"end": true`
            return {"ended": True}
        if self.multi_agent:
            return {"actions": to_json(results[0])}
        return {"actions": [to_json(r) for r in results]}

    @torch.no_grad()
    def predict(self, steps: list[Step]) -> list[Any]:
        """Actions for the env, one per step; steps of one session run in turn."""
        results: list[Any] = [None] * len(steps)
        for round_ in _rounds(steps):
            actions = self._act([steps[i] for i in round_])
            for i, action in zip(round_, actions, strict=True):
                results[i] = action
        return results

    def _act(self, steps: list[Step]) -> list[Any]:
        episodes = [self._episode(step) for step in steps]
        policy = self.policy
        common: dict[str, Any] = {
            "rl_module": policy.module,
            "episodes": episodes,
            "explore": self.explore,
            "shared_data": {},
        }
        batch = policy.env_to_module(batch={}, **common)
        module = policy.module
        output = (
            module.forward_exploration(batch) if self.explore else module.forward_inference(batch)
        )
        to_env = policy.module_to_env(batch=output, **common)
        actions = to_env.pop(Columns.ACTIONS)
        for_env = to_env.pop(Columns.ACTIONS_FOR_ENV, actions)
        for i, step in enumerate(steps):
            if step.session_id is not None:
                extra = {column: values[i] for column, values in to_env.items()}
                self._remember(step.session_id, episodes[i], actions[i], extra)
        return list(for_env)

    def _episode(self, step: Step) -> Any:
        session = self.sessions.get(step.session_id) if step.session_id and not step.reset else None
        if session is None:
            episode = self._new_episode()
            if self.multi_agent:
                episode.add_env_reset(observations=step.observation)
            else:
                episode.add_env_reset(observation=step.observation)
            return episode
        episode = session.episode
        if self.multi_agent:
            episode.add_env_step(
                observations=step.observation,
                actions=session.actions,
                rewards=dict.fromkeys(session.actions, 0.0),
                extra_model_outputs=_per_agent(session.extra_model_outputs),
            )
        else:
            episode.add_env_step(
                observation=step.observation,
                action=session.actions,
                reward=0.0,
                extra_model_outputs=session.extra_model_outputs,
            )
        return episode

    def _new_episode(self) -> Any:
        if self.multi_agent:
            assert isinstance(self.policy, MultiAgentPolicy)
            return MultiAgentEpisode(
                id_=uuid.uuid4().hex,
                observation_space=self.observation_space,
                action_space=self.action_space,
                agent_to_module_mapping_fn=self.mapping,
            )
        return SingleAgentEpisode(
            observation_space=self.observation_space, action_space=self.action_space
        )

    def _remember(self, session_id: str, episode: Any, actions: Any, extra: dict[str, Any]) -> None:
        if len(episode) > 2 * KEEP_STEPS:
            episode = episode.cut(len_lookback_buffer=KEEP_STEPS)
        self.sessions[session_id] = Session(episode, actions, extra)
        self.sessions.move_to_end(session_id)
        while len(self.sessions) > self.max_sessions:
            self.sessions.popitem(last=False)


def session_state(policy: ConnectedPolicy) -> list[str]:
    """What carries over from one step of a session to the next, so a session's requests
    must reach the replica that holds it: recurrent state, connectors reading earlier steps."""
    kept = ["a recurrent RLModule"] if policy.module.is_stateful() else []
    names = dict.fromkeys(type(c).__name__ for c in policy.env_to_module.connectors)
    return kept + [f"the connector {name}" for name in names if name not in PER_STEP_ENV_TO_MODULE]


def _agent_mapping(policy: ConnectedPolicy) -> tuple[str | None, Callable[..., str] | None]:
    """(the self-play learner or None, the agent-to-module mapping of served episodes)."""
    if not isinstance(policy, MultiAgentPolicy):
        return None, None
    mapping = policy.policy_mapping_fn
    if not isinstance(mapping, OpponentPool):
        return None, mapping
    learner = mapping.learner
    return learner, lambda agent_id, episode=None, **kwargs: learner


def single_agent_steps(
    given: Any, space: Any, session_id: str | None = None, reset: bool = False
) -> list[Step]:
    """`"observations"` of a single-agent request, each checked against `space`."""
    if not isinstance(given, list) or not given:
        raise BadRequest(
            f'"observations" must be a non-empty list of observations; send e.g. {SINGLE_EXAMPLE}'
        )
    if session_id is not None and len(given) != 1:
        raise BadRequest(f"a session acts on one observation per request, got {len(given)}")
    checked = [inputs.observation(o, space, f"observations[{i}]") for i, o in enumerate(given)]
    return [Step(o, session_id, reset) for o in checked]


def _rounds(steps: list[Step]) -> list[list[int]]:
    """Step indices in rounds in which no session appears twice, in request order."""
    rounds: list[list[int]] = []
    seen: list[set[str]] = []
    for i, step in enumerate(steps):
        k = 0
        if step.session_id is not None:
            while k < len(seen) and step.session_id in seen[k]:
                k += 1
        if k == len(rounds):
            rounds.append([])
            seen.append(set())
        rounds[k].append(i)
        if step.session_id is not None:
            seen[k].add(step.session_id)
    return rounds


def _per_agent(columns: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{column: {agent: value}} -> {agent: {column: value}} (MultiAgentEpisode's layout)."""
    regrouped: dict[str, dict[str, Any]] = {}
    for column, per_agent in columns.items():
        for agent, value in per_agent.items():
            regrouped.setdefault(agent, {})[column] = value
    return regrouped


def to_json(value: Any) -> Any:
    """Actions as JSON values: numpy scalars and arrays to numbers and lists."""
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    return value
