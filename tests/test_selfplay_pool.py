"""Self-play's opponent pool without Ray: the mapping's draws, PFSP's weights, and the
checks of the pool, the callback and the learner's module (test_selfplay.py runs them on a
real Algorithm)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from rlsuite.errors import UsageError
from rlsuite.launcher.loader import load_experiment
from rlsuite.multiagent import check_multi_agent
from rlsuite.multiagent.opponents import HeuristicRLModule
from rlsuite.multiagent.selfplay import (
    LEARNER,
    RANDOM,
    OpponentPool,
    opponent_pool,
    pfsp_weights,
    pool_modules,
    selfplay_callback,
)
from tests.selfplay_helpers import EXPERIMENT, LEAGUE, SEATS


def test_each_game_pits_the_learner_against_one_pool_member() -> None:
    mapping = OpponentPool(SEATS, opponents=("main_v1", "main_v2"))
    seats, opponents = Counter(), Counter()
    for _ in range(200):
        episode = MultiAgentEpisode()
        policies = {agent: mapping(agent, episode) for agent in SEATS}
        assert sorted(policies.values(), key=lambda p: p != LEARNER)[0] == LEARNER
        learner_seat = next(a for a, p in policies.items() if p == LEARNER)
        (opponent,) = (p for p in policies.values() if p != LEARNER)
        assert mapping(learner_seat, episode) == LEARNER  # the same answer every call
        seats[learner_seat] += 1
        opponents[opponent] += 1
    assert set(seats) == set(SEATS) and min(seats.values()) > 60  # both seats, about half each
    assert set(opponents) == {"main_v1", "main_v2"} and min(opponents.values()) > 60


def test_weighted_draws_follow_the_weights_and_keep_fixed_members() -> None:
    mapping = OpponentPool(SEATS, opponents=("main_v1",), fixed=LEAGUE, weights=(0.2, 0.8))
    assert mapping.members == ("main_v1", "heuristic")
    opponents = Counter()
    for _ in range(1000):
        episode = MultiAgentEpisode()
        (opponent,) = (p for p in (mapping(a, episode) for a in SEATS) if p != LEARNER)
        opponents[opponent] += 1
    assert 730 < opponents["heuristic"] < 870, opponents  # 800 expected, 5 sigma either side


def test_pfsp_weights() -> None:
    rates = {"random": 1.0, "heuristic": 0.1, "main_v1": 0.75}
    weights = pfsp_weights(("random", "heuristic", "main_v1", "main_v2"), rates)
    # beaten: the floor; mostly lost: (1 - 0.1)^2; won 3 in 4; unplayed: an even match
    assert weights == pytest.approx((0.02, 0.81, 0.0625, 0.25))


def test_mapping_refuses_agents_of_another_game() -> None:
    with pytest.raises(KeyError, match="not a seat"):
        OpponentPool(SEATS)("agent_0", MultiAgentEpisode())


def test_opponent_pool_settings() -> None:
    settings = opponent_pool("classic/connect_four")
    assert settings["policies"] == {LEARNER, RANDOM}
    assert settings["policies_to_train"] == [LEARNER]
    assert settings["policy_mapping_fn"] == OpponentPool(SEATS)
    league = opponent_pool("classic/connect_four", fixed=LEAGUE)
    assert league["policies"] == {LEARNER, RANDOM, "heuristic"}
    assert league["policy_mapping_fn"] == OpponentPool(SEATS, fixed=LEAGUE)
    modules = pool_modules(RLModuleSpec(), fixed=LEAGUE).rl_module_specs
    assert modules["heuristic"].module_class is HeuristicRLModule


def test_the_experiment_passes_the_multi_agent_checks() -> None:
    check_multi_agent(load_experiment(EXPERIMENT).config)


# Bad input: UsageErrors before Ray starts (tests/test_multiagent_bad_input.py runs them
# through the CLI).


def test_fixed_members_must_be_scripted_players() -> None:
    with pytest.raises(UsageError, match="no scripted player 'minimax' for the pool; choose from"):
        opponent_pool("classic/connect_four", fixed=("minimax",))


def test_self_play_needs_a_two_player_turn_based_game() -> None:
    with pytest.raises(UsageError, match=r"two-player turn-based game; mpe/simple_spread has 3"):
        opponent_pool("mpe/simple_spread")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"win_rate_threshold": 0.0}, "must lie in \\(0, 1\\]"),
        ({"win_rate_threshold": 1.5}, "must lie in \\(0, 1\\]"),
        ({"max_snapshots": 0}, "max_snapshots=0: must be an integer of at least 1"),
        ({"evaluation_games": 2.5}, "evaluation_games=2.5: must be an integer"),
        ({"opponent_sampling": "elo"}, "opponent_sampling='elo': choose 'uniform' or 'pfsp'"),
    ],
)
def test_callback_settings_are_checked(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        selfplay_callback(**settings)


def test_mapping_built_for_another_env() -> None:
    config = load_experiment(EXPERIMENT).config.copy(copy_frozen=False)
    config.environment("mpe/simple_spread")
    with pytest.raises(UsageError, match="self-play mapping seats player_0, player_1 but mpe"):
        check_multi_agent(config)


def test_only_the_learner_may_train() -> None:
    config = load_experiment(EXPERIMENT).config.copy(copy_frozen=False)
    config.multi_agent(policies_to_train=[LEARNER, RANDOM])
    with pytest.raises(UsageError, match=r"self-play trains only 'main'.*main, random"):
        check_multi_agent(config)


def test_learner_without_masking() -> None:
    config = load_experiment(EXPERIMENT).config.copy(copy_frozen=False)
    config.rl_module(rl_module_spec=pool_modules(RLModuleSpec(), fixed=LEAGUE))
    with pytest.raises(UsageError, match="policy 'main' does not apply them"):
        check_multi_agent(config)
