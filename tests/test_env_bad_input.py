"""Bad input about the env and the model it feeds, refused before Ray starts: an env name
close to a known one, an env_config key the env does not take, a model config RLlib's
module cannot take (one line, exit 2); a user's env that raises while built (its
traceback and one line naming it, exit 1). Nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ROOT, assert_rejected, run_main, write

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"


def test_unknown_env_suggests_close_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", "environment.env=classic/cartpol", storage=storage)
    assert_rejected(capsys, code, storage, "unknown env 'classic/cartpol'", "classic/cartpole")


def test_unknown_atari_game_suggests_close_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", "environment.env=atari/breakot", storage=storage)
    assert_rejected(capsys, code, storage, "atari/breakout")


GRID = """import gymnasium as gym
from ray.rllib.algorithms.ppo import PPOConfig

from rlsuite import Experiment


class Grid(gym.Env):
    def __init__(self, config):
        self.size = config["size"]


experiment = Experiment(PPOConfig().environment(Grid), {"training_iteration": 1})
"""


def test_an_env_that_raises_while_built_is_named_before_ray(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's env failing in its constructor (a key its env_config lacks) was a
    traceback of the suite's checks, exit 1: now the env's traceback, then one line
    naming the env and its own file and line; nothing written."""
    storage = tmp_path / "results"
    path = write(tmp_path, "grid.py", GRID)
    code = run_main(path, storage=storage)
    *printed, last = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and "KeyError: 'size'" in printed, printed
    assert last.startswith("rlsuite.run: env ") and "raised while it was built: " in last
    assert last.endswith(f"KeyError: 'size' (at {path}:9)"), last
    assert not storage.exists()


def test_an_env_config_key_the_env_does_not_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_main(
        CARTPOLE, "--set", "environment.env_config={'gravity': 3}", storage=tmp_path / "results"
    )
    assert_rejected(
        capsys, code, tmp_path / "results", "does not take env_config key 'gravity'", "remove it"
    )


@pytest.mark.timeout(300)  # unrefused, the trial would fail inside Ray
def test_a_model_config_the_rlmodule_cannot_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only multi-agent configs built their RLModules before Ray: a single-agent one
    failed inside its trial with RLlib's traceback."""
    storage = tmp_path / "results"
    flags = ("--smoke", "--set", "rl_module.model_config.fcnet_activation=gelu")
    code = run_main(CARTPOLE, *flags, storage=storage)
    assert_rejected(capsys, code, storage, "no RLModule for env classic/cartpole", "gelu")


def test_an_env_without_spaces_skips_the_module_check() -> None:
    """`check_env` gives (None, None) for an env without spaces; the module check leaves
    that to RLlib's env runner rather than blame the model config for it."""
    from ray.rllib.algorithms.ppo import PPOConfig

    from rlsuite.errors import UsageError
    from rlsuite.rl import validate

    config = PPOConfig().environment("CartPole-v1")
    validate.check_module_builds(config, (None, None))  # no UsageError, no AttributeError
    with pytest.raises(UsageError, match="gelu"):  # with spaces, the check does run
        gelu = config.copy(copy_frozen=False).rl_module(model_config={"fcnet_activation": "gelu"})
        validate.check_module_builds(gelu, validate.check_env(gelu))
