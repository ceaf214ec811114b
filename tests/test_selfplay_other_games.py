"""Self-play on a game other than connect four (the registry's tic-tac-toe): the pool, its
evaluation games and `rlsuite.evaluate` use the players that know the game, and the
connect-four players are refused, in one line, before Ray starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite import metrics
from rlsuite.errors import UsageError
from rlsuite.multiagent.masking import masked_ppo_spec
from rlsuite.multiagent.opponents import (
    CarefulRLModule,
    HeuristicRLModule,
    RandomLegalRLModule,
    players_for,
    plays_connect_four,
)
from rlsuite.multiagent.policies import agent_spaces
from rlsuite.multiagent.selfplay import SelfPlayCallback, opponent_pool
from rlsuite.rl.module_build import build_failure
from tests.helpers import reject, run_cli, user_env, write

GAME = "classic/tictactoe"
BOARD_MODEL = DefaultModelConfig(conv_filters=[[16, [3, 3], 1]], head_fcnet_hiddens=[32])
EXPERIMENT = f'''
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite import Experiment, metrics
from rlsuite.multiagent.masking import masked_ppo_spec
from rlsuite.multiagent.selfplay import opponent_pool, pool_modules, selfplay_callback

config = (
    PPOConfig()
    .environment("{GAME}")
    .multi_agent(**opponent_pool("{GAME}"{{fixed}}))
    .rl_module(
        rl_module_spec=pool_modules(masked_ppo_spec()),
        model_config=DefaultModelConfig(conv_filters=[[16, [3, 3], 1]], head_fcnet_hiddens=[32]),
    )
    .callbacks(selfplay_callback(evaluation_interval=1, evaluation_games=20))
)
experiment = Experiment(
    config=config,
    stop={{{{metrics.ENV_STEPS_SAMPLED_LIFETIME: 20_000}}}},
    metric=metrics.WIN_RATE_VS_RANDOM,
)
'''


def tictactoe_seat() -> Any:
    return next(iter(agent_spaces(GAME).values()))


def test_only_connect_four_has_the_lookahead_players() -> None:
    seat = tictactoe_seat()
    assert not plays_connect_four(seat.observation, seat.action)
    assert set(players_for(seat.observation, seat.action)) == {"random"}
    four = next(iter(agent_spaces("classic/connect_four").values()))
    assert set(players_for(four.observation, four.action)) == {"random", "heuristic", "careful"}


@pytest.mark.parametrize("player", ["heuristic", "careful"])
def test_pool_refuses_a_connect_four_player_on_another_game(player: str) -> None:
    with pytest.raises(UsageError, match=rf"'{player}' player plays connect four only, and {GAME}"):
        opponent_pool(GAME, fixed=(player,))


@pytest.mark.parametrize("module_class", [HeuristicRLModule, CarefulRLModule])
def test_connect_four_player_modules_do_not_build_for_another_board(module_class: type) -> None:
    """An RLModuleSpec naming one directly is refused where the launcher builds every
    policy's module before Ray starts (rlsuite.multiagent.validate)."""
    seat = tictactoe_seat()
    spec = RLModuleSpec(
        module_class=module_class, observation_space=seat.observation, action_space=seat.action
    )
    assert build_failure(spec) == (
        f"{module_class.__name__} plays connect four only (a 6x7 board of two planes, 7 columns), "
        f"got {seat.observation} and {seat.action}"
    )
    random_spec = RLModuleSpec(
        module_class=RandomLegalRLModule,
        observation_space=seat.observation,
        action_space=seat.action,
    )
    assert build_failure(random_spec) is None


def test_evaluation_games_on_another_game_are_against_the_random_player() -> None:
    seat = tictactoe_seat()
    spec = masked_ppo_spec(BOARD_MODEL)
    spec.observation_space, spec.action_space = seat.observation, seat.action
    module = spec.build()
    algorithm = SimpleNamespace(
        config=SimpleNamespace(env=GAME, env_config={}), get_module=lambda _: module
    )
    games = SelfPlayCallback(evaluation_games=10).evaluate(algorithm, "main")
    assert set(games) == {"random"}
    assert games["random"].games == 10
    assert games["random"].tactics.wins_open == 0  # counted on connect four only


def test_tictactoe_self_play_trains_and_evaluates(tmp_path: Path) -> None:
    """The user's path: a self-play experiment on tic-tac-toe through the CLI, then
    `rlsuite.evaluate` on its checkpoint (games against the random player only)."""
    path = write(tmp_path, "selfplay_tictactoe.py", EXPERIMENT.format(fixed=""))
    run = run_cli(path, "--smoke", storage=tmp_path / "results", env=user_env())
    assert run.returncode == 0, run.stderr[-3000:]
    (trial,) = run.summary(path.stem)["trials"]
    assert trial["status"] == "OK"
    assert trial["metric"] == metrics.WIN_RATE_VS_RANDOM
    assert 0.0 <= trial["best_metric"] <= 1.0, trial  # reported by the evaluation games
    results = tmp_path / "results" / path.stem
    evaluated = subprocess.run(
        [sys.executable, "-m", "rlsuite.evaluate", str(results), "--episodes", "10"],
        capture_output=True,
        text=True,
        timeout=300,
        env=user_env(),
        cwd=tmp_path,
    )
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    assert "main vs random: win rate" in evaluated.stdout
    assert "vs heuristic" not in evaluated.stdout and "wins on the board" not in evaluated.stdout


def test_a_connect_four_player_on_another_game_is_refused_before_ray(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "bad.py", EXPERIMENT.format(fixed=', fixed=("heuristic",)'))
    reject(
        capsys,
        tmp_path,
        path,
        "--smoke",
        needles=("'heuristic' player plays connect four only", GAME),
    )
