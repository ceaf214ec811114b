"""Multi-agent bad input through the CLI: one line on stderr, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ROOT, assert_rejected, run_main, write

SPREAD = ROOT / "experiments" / "ppo_shared_spread.py"
INDEPENDENT = ROOT / "experiments" / "ippo_spread.py"
CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"


def test_unknown_agent_id_in_the_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    path = write(
        tmp_path,
        "bad_table.py",
        "from ray.rllib.algorithms.ppo import PPOConfig\n"
        "from rlsuite import Experiment, metrics\n"
        "from rlsuite.multiagent.policies import PolicyTable\n"
        "table = {'agent_0': 'p', 'agent_1': 'p', 'agent_2': 'p', 'agent_9': 'p'}\n"
        "config = PPOConfig().environment('mpe/simple_spread').multi_agent(\n"
        "    policies={'p'}, policy_mapping_fn=PolicyTable(table))\n"
        "experiment = Experiment(config=config, stop={metrics.TRAINING_ITERATION: 1})\n",
    )
    code = run_main(path, storage=storage)
    assert_rejected(capsys, code, storage, "agent 'agent_9'", "does not have")


def test_agent_without_a_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(INDEPENDENT, "--set", "environment.env_config={'N': 4}", storage=storage)
    assert_rejected(
        capsys, code, storage, "'agent_3'", "build the mapping from the env and env_config"
    )


def test_spaces_differ_within_a_shared_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(SPREAD, "--set", "environment.env=mpe/simple_tag", storage=storage)
    assert_rejected(capsys, code, storage, "share policy 'shared'", "by_type('mpe/simple_tag')")


def test_helper_error_in_the_experiment_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    path = write(
        tmp_path,
        "shared_tag.py",
        "from ray.rllib.algorithms.ppo import PPOConfig\n"
        "from rlsuite import Experiment, metrics\n"
        "from rlsuite.multiagent import shared\n"
        "config = PPOConfig().environment('mpe/simple_tag').multi_agent(**shared('mpe/simple_tag'))\n"
        "experiment = Experiment(config=config, stop={metrics.TRAINING_ITERATION: 1})\n",
    )
    code = run_main(path, storage=storage)
    assert_rejected(capsys, code, storage, "shared_tag.py:4", "observation spaces differ")


def test_multi_agent_env_without_policies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", "environment.env=mpe/simple_spread", storage=storage)
    assert_rejected(capsys, code, storage, "multi-agent env", ".multi_agent(")


def test_turn_based_game_without_masking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(
        SPREAD,
        "--set",
        "environment.env=classic/connect_four",
        storage=storage,
    )
    assert_rejected(capsys, code, storage, "action masks", "ActionMaskingTorchRLModule")


SELFPLAY = ROOT / "experiments" / "selfplay_connect4.py"


@pytest.mark.parametrize(
    ("sets", "needles"),
    [
        (
            ["environment.env=mpe/simple_spread"],
            ["self-play mapping seats player_0, player_1", "opponent_pool('mpe/simple_spread')"],
        ),
        (
            ["multi_agent.policies_to_train=['main', 'random']"],
            ["self-play trains only 'main'", "policies_to_train=['main']"],
        ),
        (
            ["rl_module.model_config.conv_filters=None"],
            ["policy 'main' gets no RLModule", "needs conv_filters of stride 1", "model_config"],
        ),
    ],
)
def test_self_play_with_a_bad_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sets: list[str], needles: list[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(SELFPLAY, *(arg for s in sets for arg in ("--set", s)), storage=storage)
    assert_rejected(capsys, code, storage, *needles)


def test_self_play_callback_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    path = write(
        tmp_path,
        "bad_selfplay.py",
        SELFPLAY.read_text().replace("win_rate_threshold=0.8", "win_rate_threshold=80"),
    )
    code = run_main(path, storage=storage)
    assert_rejected(capsys, code, storage, "bad_selfplay.py:", "win_rate_threshold=80")
