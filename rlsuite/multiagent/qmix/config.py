"""`QMIXConfig` and `QMIX`: RLlib's DQN with per-agent Q networks and a mixer.

    config = (
        QMIXConfig()
        .environment(**grouped("mpe/simple_spread"))
        .training(mixer="qmix", mixing_embed_dim=32, lr=5e-4)
    )

Only the module (per-agent Q network and mixer, `module.py`), the loss (`learner.py`) and,
for uniform one-step replay, its replay from arrays (`rlsuite/multiagent/transitions.py`)
are new. Sampling, the episode replay buffers (prioritized or not, n-step returns), the
epsilon schedule (`epsilon=`), target updates (`target_network_update_freq`, `tau`),
`training_intensity`, checkpoints and metrics are DQN's: `QMIX` is `DQN` with another
default config. DQN's distributional (`num_atoms`) and dueling heads do not apply.
"""

from __future__ import annotations

from typing import Any

from ray.rllib.algorithms.dqn import DQN, DQNConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils.from_config import NotProvided

from rlsuite.multiagent.qmix.mixers import MIXERS, QMIX
from rlsuite.multiagent.qmix.module import (
    HYPERNET_EMBED_DIM,
    MIXER,
    MIXING_EMBED_DIM,
    STANDARDIZE_REWARDS,
    QMIXTorchRLModule,
)
from rlsuite.multiagent.qmix.team_env import TEAM_PREFIX, TeamEnv
from rlsuite.multiagent.transitions import TransitionReplayMixin, TransitionReplaySettings


class QMIXConfig(TransitionReplaySettings, DQNConfig):
    """DQN's config plus the mixer: `training(mixer="qmix" | "qmix_bounded" | "vdn",
    mixing_embed_dim, hypernet_embed_dim, standardize_rewards)`."""

    def __init__(self, algo_class: type | None = None) -> None:
        super().__init__(algo_class=algo_class or QMIXAlgorithm)
        self.mixer = QMIX
        self.mixing_embed_dim = 32  # PyMARL's qmix.yaml
        self.hypernet_embed_dim = 64  # PyMARL's qmix.yaml (hypernet_layers=2)
        self.dueling = False  # per-agent heads have no dueling streams
        # EPyMARL's standardise_rewards: TD targets on (r - mean) / std (reward_stats.py).
        self.standardize_rewards = False

    def training(
        self,
        *,
        mixer: str | Any = NotProvided,
        mixing_embed_dim: int | Any = NotProvided,
        hypernet_embed_dim: int | Any = NotProvided,
        standardize_rewards: bool | Any = NotProvided,
        **kwargs: Any,
    ) -> QMIXConfig:
        super().training(**kwargs)
        if mixer is not NotProvided:
            self.mixer = mixer
        if mixing_embed_dim is not NotProvided:
            self.mixing_embed_dim = mixing_embed_dim
        if hypernet_embed_dim is not NotProvided:
            self.hypernet_embed_dim = hypernet_embed_dim
        if standardize_rewards is not NotProvided:
            self.standardize_rewards = standardize_rewards
        return self

    def validate(self) -> None:
        super().validate()  # TransitionReplaySettings' check, then DQN's
        if self.mixer not in MIXERS:
            self._value_error(f"unknown mixer '{self.mixer}'; use one of {', '.join(MIXERS)}")
        if self.num_atoms != 1 or self.dueling:
            self._value_error("QMIX/VDN take neither num_atoms > 1 nor dueling=True")
        if self.env is not None and not _is_team_env(self.env):
            self._value_error(
                "QMIX/VDN train a team as one agent: use .environment(**rlsuite.multiagent."
                f"qmix.grouped({self.env!r})) and no .multi_agent() mapping"
            )

    def get_default_rl_module_spec(self) -> RLModuleSpec:
        return RLModuleSpec(module_class=QMIXTorchRLModule, model_config=self.model_config)

    @property
    def _model_config_auto_includes(self) -> dict[str, Any]:
        return super()._model_config_auto_includes | {
            MIXER: self.mixer,
            MIXING_EMBED_DIM: self.mixing_embed_dim,
            HYPERNET_EMBED_DIM: self.hypernet_embed_dim,
            STANDARDIZE_REWARDS: self.standardize_rewards,
        }

    def get_default_learner_class(self) -> type:
        from rlsuite.multiagent.qmix.learner import QMIXTorchLearner

        return QMIXTorchLearner


class QMIXAlgorithm(TransitionReplayMixin, DQN):
    """DQN's training step (sample, store, replay, learn, update targets) with QMIX's
    module and learner; uniform one-step replay from arrays where it applies."""

    @classmethod
    def get_default_config(cls) -> QMIXConfig:
        return QMIXConfig()


def _is_team_env(env: Any) -> bool:
    """`grouped(...)`'s Tune name, or the team env class itself."""
    return env is TeamEnv or (isinstance(env, str) and env.startswith(TEAM_PREFIX))
