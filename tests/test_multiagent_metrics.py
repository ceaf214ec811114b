"""Multi-agent metric keys: team, per-agent and per-policy returns."""

from __future__ import annotations

from rlsuite import metrics
from rlsuite.launcher.checks import parse_stops


def test_team_return_is_the_episode_return() -> None:
    assert metrics.TEAM_RETURN_MEAN == metrics.EPISODE_RETURN_MEAN
    assert metrics.resolve("team_return_mean") == metrics.EPISODE_RETURN_MEAN


def test_per_agent_and_per_policy_keys_are_rllibs() -> None:
    assert metrics.agent_return_mean("agent_0") == "env_runners/agent_episode_returns_mean/agent_0"
    assert metrics.policy_return_mean("shared") == "env_runners/module_episode_returns_mean/shared"


def test_per_id_keys_resolve_from_short_and_full_names() -> None:
    key = metrics.policy_return_mean("pursuer_1")
    assert metrics.resolve("policy_return_mean/pursuer_1") == key
    assert metrics.resolve(key) == key
    assert metrics.resolve("agent_return_mean/agent_2") == metrics.agent_return_mean("agent_2")
    assert metrics.resolve("agent_return_mean/") is None
    assert metrics.resolve("nonsense/agent_2") is None


def test_stop_flag_takes_a_per_policy_return() -> None:
    assert parse_stops(["policy_return_mean/shared=-20"]) == {
        metrics.policy_return_mean("shared"): -20.0
    }
