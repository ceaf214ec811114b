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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from rlsuite.errors import UsageError
from rlsuite.evaluation.acting import ConnectedPolicy, EnvStep, EpisodeResult, restore_connectors
from rlsuite.evaluation.damage import CONFIG_FILE, DamagedCheckpointError, restoring
from rlsuite.evaluation.locate import MODULES_DIR
from rlsuite.evaluation.policy import describe, module_ids


def checkpoint_config(checkpoint: Path) -> dict[str, Any]:
    """The AlgorithmConfig state an RLlib Algorithm checkpoint was saved with."""
    try:
        saved = pickle.loads((checkpoint / CONFIG_FILE).read_bytes())
        return dict(saved["ctor_args_and_kwargs"][0][0])
    except (
        OSError,
        EOFError,
        pickle.UnpicklingError,
        KeyError,
        IndexError,
        TypeError,
        ValueError,
    ) as error:
        raise DamagedCheckpointError(
            f"{checkpoint}: cannot read the run's config from {CONFIG_FILE} ({type(error).__name__}); give an RLlib Algorithm checkpoint",
            checkpoint,
        ) from None


@dataclass(frozen=True)
class MultiAgentEpisodeResult(EpisodeResult):
    """Also the returns per agent and of the team (every agent's rewards)."""

    agent_returns: dict[str, float]
    team_return: float


@dataclass
class MultiAgentPolicy(ConnectedPolicy):
    """All RLModules of a multi-agent checkpoint with its connectors and policy mapping."""

    module: MultiRLModule
    policy_mapping_fn: Callable[..., str]

    @classmethod
    def from_checkpoint(cls, checkpoint: Path) -> MultiAgentPolicy:
        mapping = checkpoint_config(checkpoint).get("policy_mapping_fn")
        if not callable(mapping):
            raise UsageError(
                f"{checkpoint}: the run's config has no policy mapping; is this a multi-agent checkpoint?"
            )
        with restoring(checkpoint):
            module = MultiRLModule.from_checkpoint(checkpoint / MODULES_DIR)
            env_to_module, module_to_env = restore_connectors(checkpoint)
        for policy in module_ids(checkpoint):
            single = module[policy]
            if isinstance(single, torch.nn.Module):
                single.eval()
        return cls(module, env_to_module, module_to_env, mapping)

    @property
    def policy_ids(self) -> list[str]:
        return sorted(self.module.keys())

    def export_refusal(self) -> str:
        return f"holds the multi-agent policies {', '.join(self.policy_ids)}; only single-agent policies export so far"

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

    def new_episode(self, env: Any, seed: int = 0) -> MultiAgentEpisode:
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

    def act(self, episode: Any, explore: bool) -> tuple[Any, Any, dict[str, Any]]:
        """(actions for the episode, actions for the env, extra model outputs), per agent."""
        actions, actions_for_env, columns = super().act(episode, explore)
        extra: dict[str, dict[str, Any]] = {}
        for column, per_agent in columns.items():
            for agent, value in per_agent.items():
                extra.setdefault(agent, {})[column] = value
        return actions, actions_for_env, extra

    def record_reset(self, episode: MultiAgentEpisode, observations: Any, infos: Any) -> None:
        episode.add_env_reset(observations=observations, infos=infos)

    def record_step(self, episode: MultiAgentEpisode, step: EnvStep) -> None:
        episode.add_env_step(
            observations=step.observations,
            actions=step.actions,
            rewards=step.rewards,
            infos=step.infos,
            terminateds=step.terminated,
            truncateds=step.truncated,
            extra_model_outputs=step.extra_model_outputs,
        )

    def result(self, episode: MultiAgentEpisode) -> MultiAgentEpisodeResult:
        agent_returns = {
            str(agent): float(single.get_return())
            for agent, single in episode.agent_episodes.items()
        }
        returns: dict[str, float] = {}
        for agent, value in agent_returns.items():
            module = str(episode.module_for(agent))
            returns[module] = returns.get(module, 0.0) + value
        return MultiAgentEpisodeResult(
            returns=returns,
            length=len(episode),
            agent_returns=agent_returns,
            team_return=float(episode.get_return()),
        )


def _agents(space: Any) -> str:
    if not isinstance(space, gym.spaces.Dict):
        return f"one agent with {describe(space)} observations"
    return ", ".join(f"{agent} {describe(s)}" for agent, s in space.spaces.items())
