"""`--set` edits land in the RLlib config with the right types, on a copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.sac import SACConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite.errors import UsageError
from rlsuite.rl.overrides import apply_sets, parse_literal
from tests.helpers import ROOT, assert_rejected, run_main

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"


def base() -> PPOConfig:
    return PPOConfig().environment("classic/cartpole", env_config={"g": 9.8})


def test_sets_typed_values_on_a_copy() -> None:
    config = base()
    edited = apply_sets(
        config,
        [
            "training.lr=1e-3",
            "training.lambda_=0.9",
            "training.num_epochs=3",
            "training.use_kl_loss=false",
            "env_runners.num_env_runners=3",
            "environment.env=atari/breakout",
        ],
    )
    assert edited.lr == 1e-3 and edited.lambda_ == 0.9 and edited.num_epochs == 3
    assert edited.use_kl_loss is False and edited.num_env_runners == 3
    assert edited.env == "atari/breakout"
    assert config.lr == PPOConfig().lr and config.env == "classic/cartpole"


def test_learning_rate_takes_a_schedule_and_back() -> None:
    scheduled = apply_sets(base(), ["training.lr=[[0, 1e-3], [150000, 2e-4]]"])
    assert scheduled.lr == [[0, 1e-3], [150000, 2e-4]]
    scheduled.validate()  # RLlib's own Scheduler accepts it
    constant = apply_sets(
        scheduled, ["training.entropy_coeff=[[0, 0.01], [10, 0]]", "training.lr=3e-4"]
    )
    assert constant.lr == 3e-4 and constant.entropy_coeff == [[0, 0.01], [10, 0.0]]


@pytest.mark.parametrize(
    "raw", ["fast", "[[100, 1e-3]]", "[[0, 1e-3], [10]]", "[[0, 1], [5, 1], [2, 1]]"]
)
def test_bad_schedule_is_refused(raw: str) -> None:
    with pytest.raises(UsageError, match="expects a float or a schedule"):
        apply_sets(base(), [f"training.lr={raw}"])


def test_int_value_for_a_float_setting_becomes_float() -> None:
    edited = apply_sets(base(), ["training.lr=1"])
    assert edited.lr == 1.0 and isinstance(edited.lr, float)


def test_fractional_gpus_where_rllib_takes_a_float_though_its_default_is_an_int() -> None:
    edited = apply_sets(base(), ["env_runners.num_gpus_per_env_runner=0.05"])
    assert edited.num_gpus_per_env_runner == 0.05
    with pytest.raises(UsageError, match="expects an int"):  # RLlib types this one int only
        apply_sets(base(), ["env_runners.num_env_runners=0.5"])


def test_nested_dict_keeps_other_keys() -> None:
    edited = apply_sets(base(), ["environment.env_config.max_episode_steps=10"])
    assert edited.env_config == {"g": 9.8, "max_episode_steps": 10}


def test_model_config_field() -> None:
    config = base().rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32]))
    edited = apply_sets(config, ["rl_module.model_config.fcnet_hiddens=[64, 64]"])
    assert edited._model_config.fcnet_hiddens == [64, 64]


def test_model_config_field_when_none_was_set() -> None:
    edited = apply_sets(base(), ["rl_module.model_config.fcnet_activation=relu"])
    assert edited._model_config.fcnet_activation == "relu"


def test_algorithm_specific_settings() -> None:
    edited = apply_sets(SACConfig(), ["training.actor_lr=1e-4", "training.tau=0.01"])
    assert edited.actor_lr == 1e-4 and edited.tau == 0.01


def test_resources_group_places_a_trial() -> None:
    """RLlib's `config.resources(...)` (e.g. SPREAD placement across a cluster's nodes)."""
    edited = apply_sets(base(), ["resources.placement_strategy=SPREAD"])
    assert edited.placement_strategy == "SPREAD"
    with pytest.raises(UsageError, match=r"did you mean resources\.placement_strategy"):
        apply_sets(base(), ["placement_strategy=SPREAD"])


def test_later_assignments_win() -> None:
    edited = apply_sets(base(), ["training.lr=1e-3", "training.lr=2e-3"])
    assert edited.lr == 2e-3


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("1e-4", 1e-4),
        ("3", 3),
        ("[64, 64]", [64, 64]),
        ("True", True),
        ("false", False),
        ("none", None),
        ("relu", "relu"),
        ("atari/pong", "atari/pong"),
    ],
)
def test_parse_literal(raw: str, value: object) -> None:
    assert parse_literal(raw) == value


def test_nested_path_into_a_number_is_rejected() -> None:
    with pytest.raises(UsageError, match="inside a float"):
        apply_sets(base(), ["training.lr.x=1"])


def test_seeds_flag_grid_searches_the_seed() -> None:
    from rlsuite.launcher.loader import load_experiment
    from rlsuite.launcher.prepare import apply_flags
    from rlsuite.run import build_parser
    from tests.helpers import ROOT

    experiment = load_experiment(ROOT / "experiments" / "ppo_cartpole.py")
    args = build_parser().parse_args(["x.py", "--seeds", "3", "--seed", "10"])
    seeded = apply_flags(experiment, args)
    assert seeded.search["seed"] == {"grid_search": [10, 11, 12]}
    assert "seed" not in experiment.search


def test_seed_flag_seeds_the_sweep_s_searcher() -> None:
    from rlsuite.launcher.loader import load_experiment
    from rlsuite.launcher.prepare import apply_flags
    from rlsuite.run import build_parser
    from tests.helpers import ROOT

    experiment = load_experiment(ROOT / "experiments" / "optuna_ppo_cartpole.py")
    assert experiment.searcher is not None and experiment.searcher.seed == 0
    parse = build_parser().parse_args
    seeded = apply_flags(experiment, parse(["x.py", "--seed", "7"])).searcher
    assert seeded is not None and seeded.seed == 7
    unseeded = apply_flags(experiment, parse(["x.py"])).searcher
    assert unseeded is not None and unseeded.seed == 0


def test_int_where_rllib_takes_an_int_or_auto() -> None:
    edited = apply_sets(base(), ["env_runners.rollout_fragment_length=3"])
    assert edited.rollout_fragment_length == 3
    assert (
        apply_sets(edited, ["env_runners.rollout_fragment_length=auto"]).rollout_fragment_length
        == "auto"
    )


def test_rllib_refusing_a_value_is_one_line() -> None:
    with pytest.raises(UsageError) as refused:
        apply_sets(base(), ["env_runners.rollout_fragment_length=0"])
    message = str(refused.value)
    assert message.startswith("--set env_runners.rollout_fragment_length: ")
    assert "must be int >0 or 'auto'" in message and "\n" not in message


@pytest.mark.parametrize(
    "path",
    [
        "env_runners.num_env_runners",
        "env_runners.num_gpus_per_env_runner",
        "learners.num_learners",
        "learners.num_gpus_per_learner",
        "environment.env_config",
        "training.lr",
        "training.gamma",
        "rl_module.model_config.fcnet_hiddens",
    ],
)
def test_none_is_refused_where_rllib_s_default_is_not_none(path: str) -> None:
    """RLlib fails on these in the trial (or the builder, or the suite's GPU count)."""
    with pytest.raises(UsageError) as refused:
        apply_sets(base(), [f"{path}=None"])
    message = str(refused.value)
    assert message.startswith(f"--set {path}: expects ") and "None" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "path",
    [
        "debugging.seed",
        "evaluation.evaluation_interval",
        "evaluation.evaluation_config",
        "rl_module.model_config.fcnet_kernel_initializer",
        "environment.env_config.g",  # an env's own keys: the env decides
        # Behind RLlib properties that work the default out from a stored None:
        "learners.learner_class",  # float32 back for ppo_atari.py (docs/performance.md)
        "rl_module.rl_module_spec",
        "environment.is_atari",
        "training.train_batch_size_per_learner",  # None: train_batch_size / learners
    ],
)
def test_none_is_taken_where_rllib_s_default_is_none(path: str) -> None:
    apply_sets(base(), [f"{path}=None"])


def test_none_from_the_command_line_is_one_line_before_ray(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a TypeError traceback from the suite's GPU count."""
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", "env_runners.num_env_runners=None", storage=storage)
    assert_rejected(capsys, code, storage, "env_runners.num_env_runners", "an int", "None")


def test_a_string_for_an_object_setting_is_refused_unless_rllib_takes_one() -> None:
    config = base().rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32]))
    with pytest.raises(UsageError, match="expects a dict or a DefaultModelConfig, got 'foo'"):
        apply_sets(config, ["rl_module.model_config=foo"])
    with pytest.raises(UsageError, match="expects an AlgorithmConfig or a dict, got 'foo'"):
        apply_sets(config, ["evaluation.evaluation_config=foo"])  # None by default
    as_dict = apply_sets(config, ["rl_module.model_config={'fcnet_hiddens': [8]}"])
    assert as_dict._model_config == {"fcnet_hiddens": [8]}
    env_class = PPOConfig().environment(CartPoleEnv)  # RLlib takes an env class or a name
    assert apply_sets(env_class, ["environment.env=atari/breakout"]).env == "atari/breakout"


def test_a_key_inside_a_dict_setting_that_is_none_by_default() -> None:
    edited = apply_sets(
        base(), ["evaluation.evaluation_config.explore=False", "environment.env_config.a.b=1"]
    )
    assert edited.evaluation_config == {"explore": False}
    assert edited.env_config == {"g": 9.8, "a": {"b": 1}}


def test_a_key_inside_a_none_setting_that_takes_no_dict_says_how() -> None:
    with pytest.raises(UsageError, match=r"debugging\.seed is None and takes an int, not a dict"):
        apply_sets(base(), ["debugging.seed.x=1"])


def test_rllib_s_assert_on_a_value_is_one_line() -> None:
    with pytest.raises(UsageError, match=r"^--set multi_agent.policies_to_train: .*must be a"):
        apply_sets(base(), ["multi_agent.policies_to_train=main"])
