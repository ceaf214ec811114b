"""Self-play with an opponent pool on a real Algorithm: snapshots, evaluation games,
checkpoints and PFSP (connect four, the smoke-sized config of selfplay_connect4.py)."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from rlsuite import metrics
from rlsuite.evaluation.multiagent import MultiAgentPolicy
from rlsuite.launcher.loader import load_experiment
from rlsuite.multiagent.selfplay import (
    LEARNER,
    RANDOM,
    OpponentPool,
    SelfPlayCallback,
    pfsp_weights,
)
from rlsuite.results import lookup
from tests.helpers import ROOT
from tests.selfplay_helpers import (
    EXPERIMENT,
    LEAGUE,
    SEATS,
    assert_runners_act_with,
    selfplay_algorithm,
)

# A real Algorithm: one smoke-sized iteration, then a snapshot forced by a win rate of 1.


@pytest.fixture(scope="module")
def algorithm() -> Any:
    with selfplay_algorithm(load_experiment(EXPERIMENT).config) as algo:
        yield algo


@pytest.fixture(scope="module")
def snapshot_result(algorithm: Any) -> dict[str, Any]:
    algorithm.train()
    result = {"env_runners": {metrics.WIN_RATE_KEY: 1.0}}
    SelfPlayCallback(win_rate_threshold=0.9, evaluation_interval=0).on_train_result(
        algorithm=algorithm, result=result
    )
    return result


def results_sampled(results: list[dict[str, Any]], module: str) -> bool:
    return any(r["env_runners"]["num_module_steps_sampled"].get(module, 0) > 0 for r in results)


def test_snapshot_joins_the_pool_with_the_learners_weights(
    algorithm: Any, snapshot_result: dict[str, Any]
) -> None:
    pool = OpponentPool(SEATS, opponents=("main_v1",), fixed=LEAGUE)  # random left, heuristic stays
    assert algorithm.config.policy_mapping_fn == pool
    assert algorithm.env_runner.config.policy_mapping_fn == pool
    assert snapshot_result[metrics.SELFPLAY_RESULTS]["snapshots"] == 1
    weights = algorithm.learner_group.get_weights(module_ids=[LEARNER, "main_v1"])
    for name, tensor in weights[LEARNER].items():
        assert torch.equal(torch.as_tensor(tensor), torch.as_tensor(weights["main_v1"][name]))
    # The games are played with the env runners' copy, which must hold them too (it held
    # freshly drawn weights until 2026-11-29: their sync skipped an unchanged sequence number).
    assert_runners_act_with(algorithm, "main_v1", weights[LEARNER])
    # New games are against the snapshot. A smoke-sized iteration starts few new games
    # (the unfinished ones keep their opponents) and draws half of them for the heuristic,
    # so one may hold none against it: CI's clean run met one. At most 4 iterations.
    results: list[dict[str, Any]] = []
    while len(results) < 4 and not results_sampled(results, "main_v1"):
        results.append(algorithm.train())
    assert results_sampled(results, "main_v1"), "no game against the snapshot in 4 iterations"
    for result in results:
        learned = result["learners"]
        assert learned[LEARNER]["num_module_steps_trained"] > 0
        assert "num_module_steps_trained" not in learned.get("main_v1", {})  # frozen
    weights = algorithm.learner_group.get_weights(module_ids=[LEARNER, "main_v1"])
    assert any(  # the learner moved on, the snapshot did not follow
        not torch.equal(torch.as_tensor(t), torch.as_tensor(weights["main_v1"][n]))
        for n, t in weights[LEARNER].items()
    )


def test_a_snapshot_reaches_remote_env_runners() -> None:
    """The experiment samples on a remote env runner: the snapshot's weights must get there."""
    with selfplay_algorithm(load_experiment(EXPERIMENT).config, remote_env_runners=1) as algo:
        algo.train()
        SelfPlayCallback(win_rate_threshold=0.9, evaluation_interval=0).on_train_result(
            algorithm=algo, result={"env_runners": {metrics.WIN_RATE_KEY: 1.0}}
        )
        assert algo.env_runner_group.num_remote_workers() == 1
        weights = algo.learner_group.get_weights(module_ids=[LEARNER])[LEARNER]
        assert_runners_act_with(algo, "main_v1", weights)


def test_below_the_threshold_the_pool_stays(algorithm: Any, snapshot_result: dict) -> None:
    before = algorithm.config.policy_mapping_fn
    result = {"env_runners": {metrics.WIN_RATE_KEY: 0.5}}
    SelfPlayCallback(win_rate_threshold=0.9, evaluation_interval=0).on_train_result(
        algorithm=algorithm, result=result
    )
    assert algorithm.config.policy_mapping_fn == before


def test_evaluation_games_report_win_rates_and_tactics(algorithm: Any) -> None:
    callback = SelfPlayCallback(evaluation_interval=1, evaluation_games=10)
    games = callback.evaluate(algorithm, LEARNER)
    assert set(games) == {"random", "heuristic", "careful"}
    assert all(g.games == 10 and 0.0 <= g.win_rate <= 1.0 for g in games.values())
    # The lookaheads win or block at once whenever they can: in 30 games of a barely
    # trained learner, positions with a win or a single threat on the board come up.
    tactics = [g.tactics for g in games.values()]
    assert sum(t.wins_open for t in tactics) > 0 and sum(t.blocks_open for t in tactics) > 0
    result = {"env_runners": {metrics.WIN_RATE_KEY: 0.0}}
    callback.on_train_result(algorithm=algorithm, result=result)
    for key in (metrics.WINS_TAKEN, metrics.THREATS_BLOCKED):
        assert 0.0 <= lookup(result, key) <= 1.0, (key, result)


def test_checkpoint_holds_the_pool_and_evaluates(
    algorithm: Any, snapshot_result: dict, tmp_path: Path
) -> None:
    checkpoint = Path(algorithm.save_to_path(str(tmp_path / "checkpoint")))
    policy = MultiAgentPolicy.from_checkpoint(checkpoint)
    assert policy.policy_ids == ["heuristic", LEARNER, "main_v1", RANDOM]
    assert policy.policy_mapping_fn == OpponentPool(SEATS, opponents=("main_v1",), fixed=LEAGUE)
    video = tmp_path / "games.mp4"
    command = [
        *(sys.executable, "-m", "rlsuite.evaluate", str(checkpoint)),
        *("--env", "classic/connect_four", "--episodes", "4", "--video", str(video)),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=ROOT, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert any(line.startswith("main_v1 ") for line in lines)  # the pool's snapshot played
    for opponent in ("random", "heuristic", "careful"):
        (index,) = [i for i, x in enumerate(lines) if x.startswith(f"main vs {opponent}: win rate")]
        assert "(4 games:" in lines[index]
        seats = r"  moving first [01]\.\d\d, second [01]\.\d\d; "
        tactics = r"took (\d+) of (\d+) wins on the board, blocked (\d+) of (\d+) single threats"
        found = re.fullmatch(seats + tactics, lines[index + 1])
        assert found, lines[index + 1]
        taken, open_wins, blocked, threats = map(int, found.groups())
        assert taken <= open_wins and blocked <= threats
    assert video.stat().st_size > 0


def win_rates(algorithm: Any) -> dict[str, float]:
    """PFSP's smoothed win rates, which the pool mapping (and so a checkpoint) holds."""
    return dict(algorithm.config.policy_mapping_fn.win_rates)


def test_pfsp_sends_new_weights_to_the_env_runners(algorithm: Any, snapshot_result: dict) -> None:
    callback = SelfPlayCallback(
        win_rate_threshold=1.0, evaluation_interval=0, opponent_sampling="pfsp"
    )
    rates = {"heuristic": 0.1, "main_v1": 0.6}
    result = {"env_runners": {metrics.WIN_RATE_KEY: 0.5, metrics.POOL_WIN_RATES_KEY: rates}}
    callback.on_train_result(algorithm=algorithm, result=result)
    weights = pfsp_weights(("main_v1", "heuristic"), rates)
    smoothed = (("main_v1", 0.6), ("heuristic", 0.1))  # the members' order
    pool = OpponentPool(
        SEATS, opponents=("main_v1",), fixed=LEAGUE, weights=weights, win_rates=smoothed
    )
    assert algorithm.config.policy_mapping_fn == pool
    assert algorithm.env_runner.config.policy_mapping_fn == pool
    shares = result[metrics.SELFPLAY_RESULTS]["opponent_shares"]
    assert shares["heuristic"] == pytest.approx(0.81 / (0.81 + 0.16))
    later = {metrics.WIN_RATE_KEY: 0.5, metrics.POOL_WIN_RATES_KEY: {"heuristic": 0.5}}
    callback.on_train_result(algorithm=algorithm, result={"env_runners": later})
    assert win_rates(algorithm) == pytest.approx({"heuristic": 0.3, "main_v1": 0.6})
    rates = algorithm.train()["env_runners"][metrics.POOL_WIN_RATES_KEY]
    played = {opponent: rate for opponent, rate in rates.items() if not math.isnan(rate)}
    assert played and set(played) <= {"main_v1", "heuristic"}  # the random player left
    assert all(0.0 <= rate <= 1.0 for rate in played.values())
    nan = {"heuristic": float("nan")}  # how RLlib reports a member without games
    later = {metrics.WIN_RATE_KEY: 0.5, metrics.POOL_WIN_RATES_KEY: nan}
    callback.on_train_result(algorithm=algorithm, result={"env_runners": later})
    assert win_rates(algorithm) == pytest.approx({"heuristic": 0.3, "main_v1": 0.6})
