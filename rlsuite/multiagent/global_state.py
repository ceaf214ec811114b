"""The global state of a multi-agent env step, for centralized critics (MAPPO).

`AddGlobalObservations` is a learner ConnectorV2 piece: for every agent's timestep it adds
the observations of all agents at the same env step, flattened and concatenated in a fixed
agent order, as the column `GLOBAL_OBS` ("CL", concatenated local observations, the state
MAPPO's critic reads on MPE). It runs on the learner only: PPO's env runners never compute
values on the new API stack; GAE (`GeneralAdvantageEstimation`) and the value loss call
`compute_values` on the learner's batch, which then holds this column next to `obs`.

RLlib has no connector for this (its old-stack `centralized_critic` example rewrote
observations in a postprocessing callback); building the column from the episodes beside
`AddObservationsFromEpisodesToBatch` keeps each actor's own observation untouched, so the
env runners, checkpoints and exports see a plain PPO policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.typing import EpisodeType

GLOBAL_OBS = "global_obs"


class AddGlobalObservations(ConnectorV2):
    """Adds `GLOBAL_OBS` (all agents' observations of the same env step) to a train batch.

    Assumes what MAPPO's parallel envs give: every agent acts at every env step of an
    episode chunk, so row t of each agent's episode is the same env step for all of them.
    """

    def __init__(
        self,
        input_observation_space: gym.Space | None = None,
        input_action_space: gym.Space | None = None,
        *,
        agent_ids: Sequence[str],
        **kwargs: Any,
    ) -> None:
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self.agent_ids = list(agent_ids)

    def __call__(
        self,
        *,
        rl_module: Any,
        batch: dict[str, Any],
        episodes: list[EpisodeType],
        explore: bool | None = None,
        shared_data: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        # Same episode and agent order as AddObservationsFromEpisodesToBatch, so row i of
        # GLOBAL_OBS and of OBS come from the same agent and env step.
        for episode in episodes:
            assert isinstance(episode, MultiAgentEpisode), (
                "a centralized critic needs multi-agent episodes"
            )
            state = global_observations(episode, self.agent_ids)
            for agent_id in episode.agent_ids:
                self.add_n_batch_items(
                    batch,
                    GLOBAL_OBS,
                    items_to_add=state,
                    num_items=len(state),
                    single_agent_episode=episode.agent_episodes[agent_id],
                )
        return batch


def global_observations(episode: MultiAgentEpisode, agent_ids: Sequence[str]) -> np.ndarray:
    """(T, sum of flat observation sizes) array: row t holds every agent's observation at t,
    in `agent_ids` order, for the T timesteps the learner takes from each agent's episode."""
    missing = [agent for agent in agent_ids if agent not in episode.agent_episodes]
    lengths = {agent: len(episode.agent_episodes[agent]) for agent in episode.agent_episodes}
    if missing or len(set(lengths.values())) > 1:
        raise ValueError(
            f"the centralized critic needs every agent ({', '.join(agent_ids)}) to act at "
            f"every env step, but an episode chunk has agent steps {lengths}; use it on "
            "parallel envs whose agents all act together"
        )
    parts = []
    for agent in agent_ids:
        agent_episode = episode.agent_episodes[agent]
        steps = len(agent_episode)
        observations = np.asarray(agent_episode.get_observations(slice(0, steps)))
        parts.append(observations.reshape(steps, -1).astype(np.float32, copy=False))
    return np.concatenate(parts, axis=1)


@dataclass(frozen=True)
class GlobalObservationsBuilder:
    """What `config.learners(learner_connector=...)` takes: a picklable callable from the
    env's spaces to the connector, remembering the agent order of the critic's input."""

    agent_ids: tuple[str, ...]

    def __call__(
        self, input_observation_space: gym.Space | None, input_action_space: gym.Space | None
    ) -> AddGlobalObservations:
        return AddGlobalObservations(
            input_observation_space, input_action_space, agent_ids=self.agent_ids
        )
