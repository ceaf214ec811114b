"""A multi-agent policy restored from an RLlib checkpoint, and its episodes.

The checkpoint holds every RLModule (one directory per policy, self-play snapshots
included), the env runner's connector pipelines and the AlgorithmConfig the run ended
with, whose `policy_mapping_fn` says which agent each policy drives. Episodes run as in
RLlib's MultiAgentEnvRunner: a MultiAgentEpisode with that mapping, the env-to-module
connectors, one forward pass of the MultiRLModule, the module-to-env connectors.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.connectors.connector_pipeline_v2 import ConnectorPipelineV2
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from rlsuite.errors import UsageError
from rlsuite.evaluation.policy import (
    ENV_TO_MODULE_DIR,
    MODULE_TO_ENV_DIR,
    MODULES_DIR,
    describe,
    module_ids,
)

CONFIG_FILE = "class_and_ctor_args.pkl"  # RLlib's: the Algorithm class and its config state
FrameSink = Callable[[np.ndarray], None]


def checkpoint_config(checkpoint: Path) -> dict[str, Any]:
    """The AlgorithmConfig state an RLlib Algorithm checkpoint was saved with."""
    try:
        saved = pickle.loads((checkpoint / CONFIG_FILE).read_bytes())
        return dict(saved["ctor_args_and_kwargs"][0][0])
    except (OSError, pickle.UnpicklingError, KeyError, IndexError, TypeError) as error:
        raise UsageError(
            f"{checkpoint}: cannot read the run's config from {CONFIG_FILE} ({type(error).__name__}); give an RLlib Algorithm checkpoint"
        ) from None


@dataclass
class MultiAgentPolicy:
    """All RLModules of a multi-agent checkpoint with its connectors and policy mapping."""

    module: MultiRLModule
    env_to_module: ConnectorPipelineV2
    module_to_env: ConnectorPipelineV2
    policy_mapping_fn: Callable[..., str]
    shared_data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_checkpoint(cls, checkpoint: Path) -> MultiAgentPolicy:
        mapping = checkpoint_config(checkpoint).get("policy_mapping_fn")
        if not callable(mapping):
            raise UsageError(
                f"{checkpoint}: the run's config has no policy mapping; is this a multi-agent checkpoint?"
            )
        module = MultiRLModule.from_checkpoint(checkpoint / MODULES_DIR)
        for policy in module_ids(checkpoint):
            single = module[policy]
            if isinstance(single, torch.nn.Module):
                single.eval()
        return cls(
            module=module,
            env_to_module=ConnectorPipelineV2.from_checkpoint(checkpoint / ENV_TO_MODULE_DIR),
            module_to_env=ConnectorPipelineV2.from_checkpoint(checkpoint / MODULE_TO_ENV_DIR),
            policy_mapping_fn=mapping,
        )

    @property
    def policy_ids(self) -> list[str]:
        return sorted(self.module.keys())

    def check_env(self, env_name: str, env: Any) -> None:
        """Refuse an env whose agents or spaces differ from those trained on."""
        trained = self.env_to_module.input_observation_space
        if not hasattr(env, "possible_agents"):
            raise UsageError(
                f"env {env_name} is a single-agent env but the checkpoint holds the multi-agent policies {', '.join(self.policy_ids)}; evaluate it on the env it was trained on"
            )
        spaces = gym.spaces.Dict({a: env.get_observation_space(a) for a in env.possible_agents})
        if not isinstance(trained, gym.spaces.Dict) or dict(trained.spaces) != dict(spaces.spaces):
            raise UsageError(
                f"env {env_name} has agents {_agents(spaces)} but the checkpoint was trained on {_agents(trained)}; evaluate it on the env it was trained on"
            )

    def new_episode(self, env: Any, seed: int) -> MultiAgentEpisode:
        self.shared_data = {}  # connector state (e.g. RNN states) is per episode
        agents = env.possible_agents
        return MultiAgentEpisode(
            # Mappings may draw from the episode id (self-play picks seats and opponents
            # so): an id from the seed keeps evaluations repeatable.
            id_=f"evaluation-seed-{seed}",
            observation_space=gym.spaces.Dict({a: env.get_observation_space(a) for a in agents}),
            action_space=gym.spaces.Dict({a: env.get_action_space(a) for a in agents}),
            agent_to_module_mapping_fn=self.policy_mapping_fn,
        )

    @torch.no_grad()
    def act(self, episode: MultiAgentEpisode, explore: bool) -> tuple[dict, dict, dict]:
        """(actions for the episode, actions for the env, extra model outputs), per agent."""
        common: dict[str, Any] = {
            "rl_module": self.module,
            "episodes": [episode],
            "explore": explore,
            "shared_data": self.shared_data,
        }
        batch = self.env_to_module(batch={}, **common)
        output = (
            self.module.forward_exploration(batch)
            if explore
            else self.module.forward_inference(batch)
        )
        to_env = self.module_to_env(batch=output, **common)
        # The connectors listify for a vector env of one: take element 0.
        actions = to_env.pop(Columns.ACTIONS)[0]
        actions_for_env = to_env.pop(Columns.ACTIONS_FOR_ENV, [actions])[0]
        extra: dict[str, dict[str, Any]] = {}
        for column, per_env in to_env.items():
            for agent, value in per_env[0].items():
                extra.setdefault(agent, {})[column] = value
        return actions, actions_for_env, extra


@dataclass(frozen=True)
class MultiAgentEpisodeResult:
    """Returns per policy (summed over its agents), per agent and of the team; env steps."""

    returns: dict[str, float]
    agent_returns: dict[str, float]
    team_return: float
    length: int


def play_episode(
    policy: MultiAgentPolicy, env: Any, explore: bool, seed: int, sink: FrameSink | None
) -> MultiAgentEpisodeResult:
    episode = policy.new_episode(env, seed)
    observations, infos = env.reset(seed=seed)
    episode.add_env_reset(observations=observations, infos=infos)
    _render(env, sink)
    while not episode.is_done:
        actions, actions_for_env, extra = policy.act(episode, explore)
        observations, rewards, terminateds, truncateds, infos = env.step(actions_for_env)
        episode.add_env_step(
            observations=observations,
            actions=actions,
            rewards=rewards,
            infos=infos,
            terminateds=terminateds,
            truncateds=truncateds,
            extra_model_outputs=extra,
        )
        _render(env, sink)
    agent_returns = {
        str(agent): float(single.get_return()) for agent, single in episode.agent_episodes.items()
    }
    returns: dict[str, float] = {}
    for agent, value in agent_returns.items():
        module = str(episode.module_for(agent))
        returns[module] = returns.get(module, 0.0) + value
    return MultiAgentEpisodeResult(
        returns, agent_returns, float(episode.get_return()), len(episode)
    )


def _render(env: Any, sink: FrameSink | None) -> None:
    if sink is None:
        return
    frame = env.render()
    if not isinstance(frame, np.ndarray) or frame.ndim != 3:
        raise ValueError("the env does not render RGB frames")
    sink(frame)


def _agents(space: Any) -> str:
    if not isinstance(space, gym.spaces.Dict):
        return f"one agent with {describe(space)} observations"
    return ", ".join(f"{agent} {describe(s)}" for agent, s in space.spaces.items())
