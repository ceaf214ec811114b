"""MAPPO: PPO whose actors see their own observation and whose critic sees the global state.

    config = mappo(
        PPOConfig().environment("mpe/simple_spread").multi_agent(**shared("mpe/simple_spread"))
    )

`mappo(config)` gives every policy a `CentralizedCriticPPOModule` and adds
`AddGlobalObservations` to the learner connector pipeline (Yu et al. 2022, "The
Surprising Effectiveness of PPO in Cooperative Multi-Agent Games"; on MPE the critic's
state is the concatenation of all agents' observations). Only training changes: the
actor, its inputs and the env runners are those of plain PPO, so checkpoints restore and
act like any PPO module on one agent's observation.

RLlib 2.60 has no new-stack MAPPO; the module subclasses RLlib's default PPO module and
builds its extra critic encoder from RLlib's Catalog, so `model_config` (hidden sizes,
activations) shapes the critic as it shapes the actor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.models.base import ENCODER_OUT
from ray.rllib.core.models.catalog import Catalog
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite.errors import UsageError
from rlsuite.multiagent.global_state import GLOBAL_OBS, GlobalObservationsBuilder
from rlsuite.multiagent.policies import AgentSpaces, agent_spaces

# model_config key: the size of the critic's input, the flattened global state.
GLOBAL_OBS_DIM = "global_obs_dim"


class CentralizedCriticPPOModule(DefaultPPOTorchRLModule):
    """RLlib's PPO module with the value function on `GLOBAL_OBS` instead of `obs`.

    The actor encoder and policy head are the default module's; the critic has its own
    encoder (same hidden layers) over `model_config["global_obs_dim"]` inputs, and the
    value head on top. Inference-only copies on env runners drop both.
    """

    def setup(self) -> None:
        catalog: Any = self.catalog
        model_config: dict[str, Any] = dict(self.model_config or {})  # type: ignore[arg-type]
        # The default encoder alone, for the actor: the critic reads another input.
        catalog.actor_critic_encoder_config.shared = True
        super().setup()
        global_space = gym.spaces.Box(
            -np.inf, np.inf, (int(model_config[GLOBAL_OBS_DIM]),), np.float32
        )
        critic_catalog = Catalog(global_space, self.action_space, model_config)  # type: ignore[arg-type]
        self.critic_encoder: Any = critic_catalog.build_encoder(framework="torch")

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        # No Columns.EMBEDDINGS: PPO's loss would feed the actor's features to the value
        # head; without them it calls compute_values on the batch, i.e. the global state.
        return self._forward(batch, **kwargs)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if GLOBAL_OBS not in batch:
            raise KeyError(
                f"the centralized critic reads '{GLOBAL_OBS}', which this batch lacks; "
                "configure training with rlsuite.multiagent.mappo(config)"
            )
        features = self.critic_encoder({Columns.OBS: batch[GLOBAL_OBS]})[ENCODER_OUT]
        return self.vf(features).squeeze(-1)

    def get_non_inference_attributes(self) -> list[str]:
        return ["vf", "critic_encoder"]


def mappo(config: AlgorithmConfig) -> AlgorithmConfig:
    """`config` (PPO on a parallel multi-agent env, with its policy mapping) turned into
    MAPPO: centralized-critic modules for every policy and the global state for the
    learner. Call it after `.environment(...)`; it reads the env's agents from there."""
    agents = _parallel_agents(config)
    spec = RLModuleSpec(
        module_class=CentralizedCriticPPOModule,
        model_config={GLOBAL_OBS_DIM: global_obs_dim(agents)},
    )
    config.rl_module(rl_module_spec=spec)
    config.learners(learner_connector=GlobalObservationsBuilder(tuple(agents)))
    return config


def global_obs_dim(agents: Mapping[str, AgentSpaces]) -> int:
    """Size of the global state: every agent's flattened observation, end to end."""
    return sum(gym.spaces.flatdim(spaces.observation) for spaces in agents.values())


def check_centralized_critic(
    env_name: str, agents: Mapping[str, AgentSpaces], config: AlgorithmConfig
) -> None:
    """A MAPPO config still fits its env: the critic was built for the same agents (an
    `env_config` set later, e.g. `{"N": 4}`, changes them and the state's size)."""
    builder = config._learner_connector
    if not isinstance(builder, GlobalObservationsBuilder):
        return
    if list(builder.agent_ids) != list(agents):
        raise UsageError(
            f"the centralized critic was built for agents {', '.join(builder.agent_ids)} "
            f"but {env_name} with this env_config has {', '.join(agents)}; call "
            "rlsuite.multiagent.mappo(config) after setting the env and env_config"
        )
    if config.model_config.get("use_lstm"):
        raise UsageError(
            "the centralized critic takes feed-forward models only; remove use_lstm "
            "from the model config"
        )


def _parallel_agents(config: AlgorithmConfig) -> dict[str, AgentSpaces]:
    from rlsuite import envs

    env_name = config.env
    if env_name is None:
        raise UsageError(
            "mappo(config) reads the env's agents from config.env; call it after "
            ".environment('family/name')"
        )
    if envs.is_turn_based(env_name, config.env_config):
        raise UsageError(
            f"{env_name} is turn-based, but the centralized critic needs every agent to act "
            "at every step; use a parallel env (e.g. mpe/simple_spread)"
        )
    agents = agent_spaces(env_name, config.env_config)
    for agent, spaces in agents.items():
        if not isinstance(spaces.observation, gym.spaces.Box) or len(spaces.observation.shape) != 1:
            raise UsageError(
                f"agent '{agent}' of {env_name} observes {spaces.observation}; the "
                "centralized critic concatenates flat vector observations only"
            )
    return agents
