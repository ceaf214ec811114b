"""Policy mapping helpers and their checks, on real PettingZoo envs."""

from __future__ import annotations

import pytest
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite.errors import UsageError
from rlsuite.multiagent import (
    SHARED,
    agent_type,
    by_type,
    check_multi_agent,
    independent,
    shared,
    table,
)


def mapped(settings: dict, agents: list[str]) -> dict[str, str]:
    return {agent: settings["policy_mapping_fn"](agent, None) for agent in agents}


SPREAD_AGENTS = ["agent_0", "agent_1", "agent_2"]
TAG_AGENTS = ["adversary_0", "adversary_1", "adversary_2", "agent_0"]


def test_shared_maps_every_agent_to_one_policy() -> None:
    settings = shared("mpe/simple_spread")
    assert settings["policies"] == {SHARED}
    assert set(mapped(dict(settings), SPREAD_AGENTS).values()) == {SHARED}


def test_independent_gives_each_agent_its_own_policy() -> None:
    settings = independent("sisl/multiwalker")
    walkers = ["walker_0", "walker_1", "walker_2"]
    assert settings["policies"] == set(walkers)
    assert mapped(dict(settings), walkers) == {walker: walker for walker in walkers}


def test_by_type_splits_teams() -> None:
    settings = by_type("mpe/simple_tag")
    assert settings["policies"] == {"adversary", "agent"}
    assert mapped(dict(settings), TAG_AGENTS) == {
        "adversary_0": "adversary",
        "adversary_1": "adversary",
        "adversary_2": "adversary",
        "agent_0": "agent",
    }


def test_agent_type_strips_the_index() -> None:
    assert [agent_type(a) for a in ("adversary_12", "piston_0", "walker3", "solo")] == [
        "adversary",
        "piston",
        "walker",
        "solo",
    ]


def test_table_maps_as_given() -> None:
    settings = table(
        "mpe/simple_tag", {a: ("hunter" if "adv" in a else "prey") for a in TAG_AGENTS}
    )
    assert settings["policies"] == {"hunter", "prey"}


def test_settings_configure_rllib() -> None:
    config = PPOConfig().environment("mpe/simple_tag").multi_agent(**by_type("mpe/simple_tag"))
    assert config.is_multi_agent and set(config.policies) == {"adversary", "agent"}
    check_multi_agent(config)


# Bad input: each a UsageError in one line that names the fix.


def test_unknown_agent_id_in_a_table() -> None:
    bad = {"agent_0": "p", "agent_1": "p", "agent_2": "p", "agent_7": "p"}
    with pytest.raises(
        UsageError, match="names agent 'agent_7', which mpe/simple_spread does not have"
    ):
        table("mpe/simple_spread", bad)


def test_agent_left_without_a_policy_by_a_table() -> None:
    with pytest.raises(UsageError, match="agent 'agent_2' of mpe/simple_spread has no policy"):
        table("mpe/simple_spread", {"agent_0": "p", "agent_1": "p"})


def test_agent_mapped_to_a_policy_that_does_not_exist() -> None:
    config = (
        PPOConfig()
        .environment("mpe/simple_spread", env_config={"N": 4})
        .multi_agent(**independent("mpe/simple_spread"))
    )
    with pytest.raises(UsageError, match="'agent_3' of mpe/simple_spread maps to policy 'agent_3'"):
        check_multi_agent(config)


def test_mapping_function_that_fails_for_an_agent() -> None:
    config = (
        PPOConfig()
        .environment("mpe/simple_spread")
        .multi_agent(policies={"a"}, policy_mapping_fn=lambda aid, ep, **kw: {"agent_0": "a"}[aid])
    )
    with pytest.raises(UsageError, match="agent 'agent_1' of mpe/simple_spread has no policy"):
        check_multi_agent(config)


def test_observation_spaces_differ_within_a_shared_policy() -> None:
    with pytest.raises(UsageError, match=r"observation spaces differ.*by_type\('mpe/simple_tag'\)"):
        shared("mpe/simple_tag")


def test_multi_agent_env_without_a_mapping() -> None:
    with pytest.raises(UsageError, match="multi-agent env but the config has no policy mapping"):
        check_multi_agent(PPOConfig().environment("mpe/simple_spread"))


def test_single_agent_env_with_a_mapping() -> None:
    config = PPOConfig().environment("classic/cartpole").multi_agent(**shared("mpe/simple_spread"))
    with pytest.raises(UsageError, match="single-agent env"):
        check_multi_agent(config)


def test_helpers_refuse_single_agent_envs() -> None:
    with pytest.raises(UsageError, match="not a multi-agent env"):
        independent("classic/cartpole")


def test_messages_are_one_line() -> None:
    with pytest.raises(UsageError) as error:
        shared("mpe/simple_tag")
    assert "\n" not in str(error.value)


def test_turn_based_game_without_masking() -> None:
    config = (
        PPOConfig()
        .environment("classic/connect_four")
        .multi_agent(**shared("classic/connect_four"))
    )
    with pytest.raises(UsageError, match=r"has action masks.*policy 'shared' does not apply them"):
        check_multi_agent(config)


def test_turn_based_game_masked_for_only_one_policy() -> None:
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    masked = RLModuleSpec(module_class=ActionMaskingTorchRLModule)
    config = PPOConfig().environment("classic/connect_four")
    config.multi_agent(**independent("classic/connect_four"))
    config.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"player_0": masked}))
    with pytest.raises(UsageError, match="policy 'player_1' does not apply them"):
        check_multi_agent(config)
    # One masking spec for every policy, with a CNN for the 6x7 board (RLlib has no
    # default one for it, which check_multi_agent also refuses).
    config.rl_module(
        rl_module_spec=masked, model_config=DefaultModelConfig(conv_filters=[[8, [4, 4], 1]])
    )
    check_multi_agent(config)
