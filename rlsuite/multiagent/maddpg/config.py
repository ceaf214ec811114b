"""`MADDPGConfig` and `MASACConfig`: RLlib's SAC algorithm with centralized critics.

    config = (
        MADDPGConfig()
        .environment(**joint("mpe/simple_tag"))
        .training(agent_policies=agent_policies("mpe/simple_tag", by_type("mpe/simple_tag")))
    )

Only the module (`module.py`, `masac_module.py`), the losses (`learner.py`) and, by
default, the replay (`rlsuite/multiagent/transitions.py`: RLlib's uniform replay as
arrays; `training(transition_replay=False)` for RLlib's buffers) are new. Sampling,
`training_intensity`, learning rates
(`actor_lr`, `critic_lr`, `alpha_lr`), Polyak target updates (`tau`,
`target_network_update_freq`), `grad_clip`, checkpoints and metrics are SAC's (and so
DQN's training step): `MADDPG` and `MASAC` are `SAC` with another default config.
RLlib 2.60 has no new-stack DDPG; MADDPG is SAC's loop with a deterministic actor and
exploration noise, which is all DDPG adds on top of that loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
from ray.rllib.algorithms.sac import SAC, SACConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils import force_list
from ray.rllib.utils.from_config import NotProvided

from rlsuite import envs
from rlsuite.errors import UsageError
from rlsuite.multiagent.maddpg.joint_env import JOINT_PREFIX, JointEnv
from rlsuite.multiagent.maddpg.masac_module import INITIAL_ALPHA, MASACTorchRLModule
from rlsuite.multiagent.maddpg.module import (
    AGENT_POLICIES,
    EXPLORATION_NOISE,
    LOCAL_CRITICS,
    MADDPGTorchRLModule,
)
from rlsuite.multiagent.maddpg.returns import log_team_returns
from rlsuite.multiagent.policies import SHARED, MultiAgentSettings, agent_spaces
from rlsuite.multiagent.transitions import TransitionReplayMixin, TransitionReplaySettings


class MADDPGConfig(TransitionReplaySettings, SACConfig):
    """SAC's config plus `training(agent_policies, exploration_noise, local_critics,
    actor_output_reg)`."""

    supports_discrete_actions = True  # Gumbel-softmax actors (BenchMARL's capability idea)

    def __init__(self, algo_class: type | None = None) -> None:
        super().__init__(algo_class=algo_class or MADDPG)
        self.agent_policies: tuple[str, ...] | None = None  # None: one policy for all
        self.exploration_noise = 0.1  # std of the Gaussian on [-1, 1] actions
        # Policies whose critics see their own agent only: independent DDPG (or SAC).
        self.local_critics: tuple[str, ...] = ()
        # Weight of the actors' mean squared raw output in their loss (`output_penalty`):
        # openai/maddpg's 1e-3. Without it every simple_tag hunter measured saturated onto
        # one to three of its five actions (docs/multiagent.md).
        self.actor_output_reg = 1e-3
        self.twin_q = False  # MADDPG has one critic per policy
        self.tau = 0.01  # Lowe et al. 2017's value
        self.gamma = 0.95  # Lowe et al. 2017's value
        # Uniform replay, as MADDPG's; SAC defaults to prioritized.
        self.replay_buffer_config = {"type": "EpisodeReplayBuffer", "capacity": 1_000_000}
        # RLlib logs the team's summed return only: `callbacks()` always puts
        # `log_team_returns` (each policy's and agent's return) first.
        self.callbacks(on_episode_end=None)

    def training(
        self,
        *,
        agent_policies: Sequence[str] | Any | None = NotProvided,
        exploration_noise: float | Any = NotProvided,
        local_critics: Sequence[str] | Any = NotProvided,
        actor_output_reg: float | Any = NotProvided,
        **kwargs: Any,
    ) -> MADDPGConfig:
        super().training(**kwargs)
        if actor_output_reg is not NotProvided:
            self.actor_output_reg = actor_output_reg
        if local_critics is not NotProvided:
            self.local_critics = tuple(local_critics or ())
        if agent_policies is not NotProvided:
            self.agent_policies = None if agent_policies is None else tuple(agent_policies)
        if exploration_noise is not NotProvided:
            self.exploration_noise = exploration_noise
        return self

    def callbacks(
        self, *args: Any, on_episode_end: Any = NotProvided, **kwargs: Any
    ) -> MADDPGConfig:
        """RLlib's `callbacks()`; an `on_episode_end` of the user's runs after
        `log_team_returns`, which it does not replace."""
        if on_episode_end is not NotProvided:
            own = [c for c in force_list(on_episode_end) if c is not log_team_returns]
            on_episode_end = [log_team_returns, *own]
        super().callbacks(*args, on_episode_end=on_episode_end, **kwargs)
        return self

    def validate(self) -> None:
        # The suite's checks first: SAC's validate() logs a notice, and bad input must
        # come out as one line.
        self._check_joint_env()
        if self.n_step not in (1, None):
            self._value_error(
                "MADDPG/MASAC take n_step=1 only: each agent's reward of a step rides in "
                "the next observation, which n-step sampling skips"
            )
        if not isinstance(self.actor_output_reg, int | float) or self.actor_output_reg < 0:
            self._value_error(
                f"actor_output_reg={self.actor_output_reg!r}: give a weight >= 0 "
                "(openai/maddpg's 1e-3, or 0 for none)"
            )
        super().validate()  # TransitionReplaySettings' check, then SAC's

    def _check_joint_env(self) -> None:
        if self.env is None:
            return
        if not _is_joint_env(self.env):
            raise UsageError(
                f"{getattr(self.algo_class, '__name__', 'MADDPG')} trains all agents as one: use .environment(**"
                f"rlsuite.multiagent.maddpg.joint({self.env!r})) and no .multi_agent() mapping"
            )
        env: Any = envs.make(self.env, self.env_config)
        try:
            check_spaces(self, env)
        finally:
            env.close()

    @property
    def env_takes_max_episode_steps(self) -> bool:
        """Whether env_config's `max_episode_steps` limits episodes (`--smoke` sets it):
        the joint env passes env_config to the registry env it wraps."""
        inner = self.env.removeprefix(JOINT_PREFIX) if isinstance(self.env, str) else None
        return inner is not None and _is_joint_env(self.env) and envs.takes_max_episode_steps(inner)

    def get_default_rl_module_spec(self) -> RLModuleSpec:
        return RLModuleSpec(module_class=MADDPGTorchRLModule, model_config=self.model_config)

    @property
    def _model_config_auto_includes(self) -> dict[str, Any]:
        return super()._model_config_auto_includes | {
            AGENT_POLICIES: self.agent_policies,
            EXPLORATION_NOISE: self.exploration_noise,
            LOCAL_CRITICS: self.local_critics,
        }

    def get_default_learner_class(self) -> type:
        from rlsuite.multiagent.maddpg.learner import MADDPGTorchLearner

        return MADDPGTorchLearner


class MASACConfig(MADDPGConfig):
    """MADDPG's layout with SAC's stochastic actors, twin critics and learned temperature
    (`initial_alpha`, `alpha_lr`, `target_entropy` as in `SACConfig`)."""

    supports_discrete_actions = False

    def __init__(self, algo_class: type | None = None) -> None:
        super().__init__(algo_class=algo_class or MASAC)
        self.twin_q = True
        # SAC's entropy bonus already costs tanh outputs at their bounds (the squashing's
        # log-probability correction), and MASAC's rows were measured without the penalty.
        self.actor_output_reg = 0.0
        self.tau = 0.005  # SAC's value (Haarnoja et al. 2018)
        self.gamma = 0.99  # SAC's value

    def get_default_rl_module_spec(self) -> RLModuleSpec:
        return RLModuleSpec(module_class=MASACTorchRLModule, model_config=self.model_config)

    @property
    def _model_config_auto_includes(self) -> dict[str, Any]:
        return super()._model_config_auto_includes | {INITIAL_ALPHA: self.initial_alpha}

    def get_default_learner_class(self) -> type:
        from rlsuite.multiagent.maddpg.learner import MASACTorchLearner

        return MASACTorchLearner


class MADDPG(TransitionReplayMixin, SAC):
    """SAC's training step (sample, store, replay, learn, update targets), MADDPG's
    module and learner."""

    @classmethod
    def get_default_config(cls) -> MADDPGConfig:  # type: ignore[override]  # as SAC's SACConfig
        return MADDPGConfig()


class MASAC(TransitionReplayMixin, SAC):
    """SAC's training step with MASAC's module and learner."""

    @classmethod
    def get_default_config(cls) -> MASACConfig:  # type: ignore[override]  # as SAC's SACConfig
        return MASACConfig()


def agent_policies(
    env: str | type, settings: MultiAgentSettings, env_config: Mapping[str, Any] | None = None
) -> tuple[str, ...]:
    """Each agent's policy id in the env's agent order, from a mapping of
    `rlsuite.multiagent.policies` (`shared`, `by_type`, `independent`, `table`)."""
    mapping = settings["policy_mapping_fn"]
    return tuple(str(mapping(agent)) for agent in agent_spaces(env, env_config))  # type: ignore[arg-type]


def check_spaces(config: MADDPGConfig, env: JointEnv) -> None:
    """The env's actions suit the algorithm, and agent_policies names every agent."""
    name = getattr(config.algo_class, "__name__", "MADDPG")
    discrete = isinstance(env.spec_joint.action_space, gym.spaces.Discrete)
    if discrete and not config.supports_discrete_actions:
        raise UsageError(
            f"{name} takes continuous actions only but {config.env} has discrete ones; "
            "set env_config continuous_actions=True (MPE) or use MADDPG (Gumbel-softmax)"
        )
    agents = env.spec_joint.agents
    if config.agent_policies is not None and len(config.agent_policies) != len(agents):
        raise UsageError(
            f"agent_policies names {len(config.agent_policies)} policies but {config.env} "
            f"has {len(agents)} agents ({', '.join(agents)}); build it with "
            "rlsuite.multiagent.maddpg.agent_policies(env, by_type(env), env_config)"
        )
    policies = list(dict.fromkeys(config.agent_policies or [SHARED]))
    unknown = [p for p in config.local_critics if p not in policies]
    if unknown:
        raise UsageError(
            f"local_critics names {', '.join(map(repr, unknown))}, which no agent of "
            f"{config.env} is mapped to; name policies of agent_policies ({', '.join(policies)})"
        )


def _is_joint_env(env: Any) -> bool:
    """`joint(...)`'s Tune name, or the joint env class itself."""
    return env is JointEnv or (isinstance(env, str) and env.startswith(JOINT_PREFIX))
