"""A self-play checkpoint loaded into an Algorithm built from the experiment's config, as
`--resume` and PBT's exploit do (Tune calls `load_checkpoint`), brings back the league:
its snapshots with their weights, and the pool that plays them, PFSP's smoothed win rates
included."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest
import torch

from rlsuite import metrics
from rlsuite.launcher.loader import load_experiment
from rlsuite.multiagent.league_restore import add_league_from
from rlsuite.multiagent.selfplay import LEARNER, OpponentPool, SelfPlayCallback
from tests.helpers import ROOT, local_ray
from tests.selfplay_helpers import assert_runners_act_with, selfplay_algorithm

EXPERIMENT = ROOT / "experiments" / "selfplay_connect4.py"
SNAPSHOTS = ("main_v1", "main_v2")


def snapshot(algorithm: Any, callback: SelfPlayCallback, rates: dict[str, float]) -> dict:
    """One iteration, then the callback as if the learner had won every game."""
    algorithm.train()
    runners = {metrics.WIN_RATE_KEY: 1.0, metrics.POOL_WIN_RATES_KEY: rates}
    result: dict[str, Any] = {"env_runners": runners}
    callback.on_train_result(algorithm=algorithm, result=result)
    return result


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(
        torch.equal(torch.as_tensor(a[n]), torch.as_tensor(b[n])) for n in a
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run with two snapshots and PFSP weights, checkpointed, and its learner weights."""
    config = load_experiment(EXPERIMENT).config
    callback = SelfPlayCallback(
        win_rate_threshold=0.9, evaluation_interval=0, opponent_sampling="pfsp"
    )
    with local_ray(), selfplay_algorithm(config) as algorithm:
        snapshot(algorithm, callback, {})
        snapshot(algorithm, callback, {"main_v1": 0.7})
        path = algorithm.save_to_path(str(tmp_path_factory.mktemp("selfplay") / "checkpoint"))
        weights = algorithm.learner_group.get_weights()
        pool = algorithm.config.policy_mapping_fn
        yield config, Path(path), weights, pool


def test_a_resumed_run_plays_the_league_it_had(trained: Any) -> None:
    config, checkpoint, weights, pool = trained
    assert set(SNAPSHOTS) <= set(weights) and pool.weights  # the run made a league
    assert pool.opponents == SNAPSHOTS
    with local_ray(), selfplay_algorithm(config) as fresh:
        assert not set(SNAPSHOTS) & set(fresh.config.policies)  # as built from the config
        fresh.load_checkpoint(str(checkpoint))
        assert fresh.config.policy_mapping_fn == pool
        assert fresh.env_runner.config.policy_mapping_fn == pool
        restored = fresh.learner_group.get_weights()
        for module in (LEARNER, *SNAPSHOTS):
            assert same(restored[module], weights[module]), module
            assert_runners_act_with(fresh, module, weights[module])
        assert not same(weights["main_v1"], weights["main_v2"])  # each its own weights
        # It goes on where it stopped: the snapshots stay frozen, the next is the third.
        result = fresh.train()
        assert "num_module_steps_trained" not in result["learners"].get("main_v1", {})
        # PFSP goes on from the smoothed win rates it had: (0.7 + 0.3) / 2 for main_v1.
        assert pool.win_rates == (("main_v1", 0.7),)
        callback = SelfPlayCallback(
            win_rate_threshold=0.9, evaluation_interval=0, opponent_sampling="pfsp"
        )
        later = {
            "env_runners": {metrics.WIN_RATE_KEY: 0.5, metrics.POOL_WIN_RATES_KEY: {"main_v1": 0.3}}
        }
        callback.on_train_result(algorithm=fresh, result=later)
        assert dict(fresh.config.policy_mapping_fn.win_rates) == {"main_v1": 0.5}
        later = {"env_runners": {metrics.WIN_RATE_KEY: 1.0}}
        callback.on_train_result(algorithm=fresh, result=later)
        assert later[metrics.SELFPLAY_RESULTS]["snapshots"] == 3
        assert fresh.config.policy_mapping_fn.opponents == (*SNAPSHOTS, "main_v3")


def test_a_checkpoint_of_another_game_adds_nothing(trained: Any) -> None:
    """A checkpoint whose pool seats other agents is left to RLlib's restore to judge."""
    config, checkpoint, _, _ = trained
    with local_ray(), selfplay_algorithm(config) as fresh:
        other = OpponentPool(("white", "black"))
        fresh.config._is_frozen = False
        fresh.config.multi_agent(policy_mapping_fn=other)
        assert add_league_from(fresh, checkpoint) == []
        assert fresh.config.policy_mapping_fn == other
        assert add_league_from(fresh, checkpoint.parent / "no-checkpoint") == []


def test_a_pool_this_algorithm_cannot_rebuild_is_left_alone(
    trained: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The checkpoint's pool plays the scripted heuristic, which a run without it in its
    config cannot rebuild: nothing is added and the run's own pool stays (RLlib's restore
    would skip the module, and the pool would then draw a module that does not exist)."""
    _, checkpoint, _, _ = trained
    added: list[str] = []
    own = OpponentPool(("player_0", "player_1"))
    algorithm = types.SimpleNamespace(
        config=types.SimpleNamespace(
            policy_mapping_fn=own, policies={LEARNER: None, "random": None}
        ),
        add_module=lambda module_id, **_: added.append(module_id),
    )
    assert add_league_from(algorithm, checkpoint) == [] and added == []
    assert algorithm.config.policy_mapping_fn == own
    assert "plays heuristic, which this Algorithm cannot rebuild" in caplog.text
