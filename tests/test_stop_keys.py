"""Stop criteria an RL run never reports would make it train until stopped by hand (Tune
only warns that the key is missing): refused before Ray starts, one line, exit 2; the keys
a run does report pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlsuite import metrics
from rlsuite.launcher import checks
from rlsuite.launcher.prepare import load_and_prepare
from rlsuite.options import RunOptions
from tests.helpers import ROOT, reject

EXPERIMENTS = ROOT / "experiments"


@pytest.mark.parametrize(
    ("experiment", "stop", "needles"),
    [
        ("ppo_cartpole", "epoch=5", ("a supervised result",)),
        ("ppo_cartpole", "validation_accuracy=0.9", ("a supervised result",)),
        ("ppo_cartpole", "win_rate_vs_heuristic=0.9", ("no self-play callback",)),
        ("ppo_cartpole", "policy_return_mean/default_policy=1", ("as one agent",)),
        ("ppo_cartpole", "agent_return_mean/default_agent=1", ("as one agent",)),
        ("ppo_shared_spread", "policy_return_mean/nosuch=1", ("no policy 'nosuch'", "shared")),
        ("ppo_shared_spread", "agent_return_mean/agent_9=1", ("no agent 'agent_9'", "agent_0")),
        ("maddpg_tag", "policy_return_mean/hunter=1", ("no policy 'hunter'", "adversary")),
        ("qmix_spread", "policy_return_mean/shared=1", ("as one agent",)),
    ],
)
@pytest.mark.timeout(300)  # unrefused, the run would train until stopped by hand
def test_a_stop_the_run_never_reports_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    experiment: str,
    stop: str,
    needles: tuple[str, ...],
) -> None:
    # The stop is named as the user wrote it, not as the result key it resolves to.
    named = f"stop {stop.partition('=')[0]}: "
    path = EXPERIMENTS / f"{experiment}.py"
    reject(capsys, tmp_path, path, "--smoke", "--stop", stop, needles=(named, *needles))


def test_every_command_line_name_comes_back_from_its_key() -> None:
    names = [*metrics.BY_NAME, "policy_return_mean/shared", "agent_return_mean/agent_0"]
    for name in names:
        key = metrics.resolve(name)
        assert key is not None and metrics.resolve(metrics.short_name(key)) == key, name
    assert metrics.short_name(metrics.policy_return_mean("a/b")) == "policy_return_mean/a/b"
    assert (
        metrics.short_name("learners/default_policy/vf_loss") == "learners/default_policy/vf_loss"
    )


@pytest.mark.parametrize(
    ("experiment", "stop"),
    [
        ("ppo_shared_spread", "policy_return_mean/shared=1"),
        ("ppo_shared_spread", "agent_return_mean/agent_0=1"),
        ("maddpg_tag", "policy_return_mean/adversary=1"),
        ("selfplay_connect4", "win_rate_vs_heuristic=0.9"),
        ("selfplay_connect4", "win_rate=0.9"),
        ("selfplay_connect4", "policy_return_mean/main_v1=0"),  # a copy made during the run
    ],
)
def test_a_stop_the_run_reports_passes(tmp_path: Path, experiment: str, stop: str) -> None:
    options = RunOptions(stops=(stop,), smoke=True, storage_path=str(tmp_path))
    prepared = load_and_prepare(EXPERIMENTS / f"{experiment}.py", options)
    key = metrics.resolve(stop.partition("=")[0])
    # A target alone keeps the run's budget beside it (here the smoke run's iterations).
    assert set(prepared.experiment.stop) == {key, metrics.TRAINING_ITERATION}


def test_a_target_alone_keeps_the_files_budget() -> None:
    """`--stop episode_return_mean=475` replaced the file's env-step budget too: a run that
    never got there trained until stopped by hand. A budget given replaces both."""
    file_stop = {metrics.EPISODE_RETURN_MEAN: 450.0, metrics.ENV_STEPS_SAMPLED_LIFETIME: 5e5}
    target = checks.stops_with_budget(["episode_return_mean=475"], file_stop)
    assert target == {metrics.ENV_STEPS_SAMPLED_LIFETIME: 5e5, metrics.EPISODE_RETURN_MEAN: 475}
    budget = checks.stops_with_budget(["env_steps=1000"], file_stop)
    assert budget == {metrics.ENV_STEPS_SAMPLED_LIFETIME: 1000}
    assert checks.stops_with_budget([], file_stop) is file_stop


def test_a_files_short_names_become_the_keys_tune_looks_up(tmp_path: Path) -> None:
    """`stop={"env_steps": ...}` in a file passed the check, went to Tune as "env_steps",
    which no RL result has, and the run never stopped on it (`--as-test` said the stop had
    no return); the same for `metric` and a scheduler's `time_attr`."""
    source = (
        "from ray.rllib.algorithms.ppo import PPOConfig\n"
        "from rlsuite import ASHA, Experiment\n"
        "experiment = Experiment(\n"
        "    PPOConfig().environment('classic/cartpole'),\n"
        "    {'env_steps': 4000, 'episode_return_mean': 150},\n"
        "    metric='episode_return_mean',\n"
        "    scheduler=ASHA(time_attr='env_steps', max_t=4000, grace_period=1000),\n"
        ")\n"
    )
    path = tmp_path / "short_names.py"
    path.write_text(source)
    options = RunOptions(as_test=True, storage_path=str(tmp_path / "results"))
    prepared = load_and_prepare(path, options)
    experiment = prepared.experiment
    assert dict(experiment.stop) == {
        metrics.ENV_STEPS_SAMPLED_LIFETIME: 4000,
        metrics.EPISODE_RETURN_MEAN: 150,
    }
    assert experiment.metric == metrics.EPISODE_RETURN_MEAN
    assert experiment.scheduler is not None
    assert experiment.scheduler.time_attr == metrics.ENV_STEPS_SAMPLED_LIFETIME
    assert prepared.threshold == (metrics.EPISODE_RETURN_MEAN, 150)
    assert not (tmp_path / "results").exists()
