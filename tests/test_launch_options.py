"""`rlsuite.launch(...)` holds its options and overrides to the command line's checks,
and applies Python objects in `overrides` as themselves.

Each call stops where Ray would start: `run_prepared` (the suite's own, not Ray's) is
replaced by one that keeps what it would run, so no test here starts Ray, refused or not.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

import rlsuite
from rlsuite.errors import UsageError
from rlsuite.launcher import api
from rlsuite.launcher.prepare import Prepared
from tests.helpers import ROOT

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"
Launch = Callable[..., Prepared]


@pytest.fixture
def launch_until_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Launch:
    """`rlsuite.launch(CARTPOLE, ...)` up to where Ray would start: what it would run."""
    kept: list[Prepared] = []
    monkeypatch.setattr(api, "run_prepared", kept.append)

    def launch(**kwargs: Any) -> Prepared:
        rlsuite.launch(CARTPOLE, storage_path=str(tmp_path / "results"), **kwargs)
        return kept[-1]

    return launch


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"sets": ["training.lr=1e-3"]}, "unknown option(s) sets (--set edits are overrides="),
        ({"seed": "3"}, "seed='3': expected a whole number, got str"),
        ({"seed": True}, "seed=True: expected a whole number, got bool"),
        ({"num_envs_per_env_runner": 0}, "num_envs_per_env_runner=0: must be at least 1"),
        ({"num_samples": 0}, "num_samples=0: must be at least 1, got 0"),
        ({"checkpoint_every": 0}, "checkpoint_every=0: must be at least 1, got 0"),
        ({"seeds": 0}, "seeds=0: must be at least 1, got 0"),
        ({"num_env_runners": -1}, "num_env_runners=-1: must be 0 or more"),
        ({"num_gpus_per_learner": float("nan")}, "expected a finite number"),
        ({"num_cpus_per_learner": 0}, "num_cpus_per_learner=0: must be more than 0"),
        ({"smoke": "yes"}, "smoke='yes': expected True or False"),
        ({"stops": 5}, "stops=5: expected a list of 'KEY=VALUE' strings"),
        ({"address": 5}, "address=5: expected a string"),
        ({"verbose": True, "quiet": True}, "verbose and quiet: choose one"),
        ({"overrides": {"rl_module.model_config": CartPoleEnv}}, "expects a dict or a Default"),
        ({"overrides": {"env_runners.num_env_runners": 1.5}}, "expects an int like 0, got 1.5"),
        ({"overrides": {"training.gamma": float("nan")}}, "expects a float like 0.98, got nan"),
        ({"overrides": 5}, "overrides=5: expected {PATH: value} or ['PATH=VALUE', ...]"),
    ],
)
def test_launch_refuses_what_the_command_line_refuses(
    launch_until_ray: Launch, tmp_path: Path, options: dict[str, Any], needle: str
) -> None:
    with pytest.raises(UsageError) as refused:
        launch_until_ray(**options)
    message = str(refused.value)
    assert needle in message and "\n" not in message
    assert not (tmp_path / "results").exists()


def test_launch_applies_python_objects_as_themselves(launch_until_ray: Launch) -> None:
    model = DefaultModelConfig(fcnet_hiddens=[8])
    prepared = launch_until_ray(
        overrides={
            "rl_module.model_config": model,
            "environment.env": CartPoleEnv,
            "training.num_epochs": np.int64(3),
            "training.lr": 1e-3,  # a literal: read back as the command line reads it
        },
        seed=np.int64(4),
    )
    config = prepared.experiment.config
    assert config._model_config == model and config.env is CartPoleEnv
    assert config.num_epochs == 3 and config.lr == 1e-3
    assert config.seed == 4 and type(config.seed) is int


def test_launch_takes_the_options_the_command_line_takes(launch_until_ray: Launch) -> None:
    prepared = launch_until_ray(
        overrides=["training.lr=1e-4"], seeds=2, checkpoint_every=3, stops={"training_iteration": 4}
    )
    experiment = prepared.experiment
    assert experiment.config.lr == 1e-4 and experiment.checkpoint_every == 3
    assert experiment.search["seed"] == {"grid_search": [0, 1]}
    assert experiment.stop == {"training_iteration": 4}


def test_the_command_line_reads_each_number_flag_with_its_check() -> None:
    """`rlsuite.launch` holds Python values to `options.CHECKS`; the command line's parser
    must read the same flags with the same functions, or the two would drift apart."""
    from rlsuite.options import CHECKS
    from rlsuite.run import build_parser

    types = {action.dest: action.type for action in build_parser()._actions}
    assert {name: types.get(name) for name in CHECKS} == CHECKS
