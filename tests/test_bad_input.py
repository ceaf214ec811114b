"""Bad flags and `--set` values: one line on stderr naming the problem and the fix, exit 2,
nothing written (bad experiment files: test_bad_experiment_file.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ROOT, assert_rejected, run_cli, run_main, write

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"


@pytest.mark.parametrize(
    ("assignment", "needles"),
    [
        ("training.lrr=1e-3", ("no setting 'lrr'", "lr")),
        ("trainig.lr=1e-3", ("unknown group 'trainig'", "training")),
        ("lr=1e-3", ("did you mean training.lr",)),
        ("training.lr=fast", ("expects a float or a schedule", "'fast'")),
        ("env_runners.num_env_runners=1.5", ("expects an int",)),
        # RLlib's builder checks this one itself (a ValueError there, one line here).
        ("env_runners.rollout_fragment_length=0", ("must be int >0 or 'auto'",)),
        ("rl_module.model_config.fcnet_hidens=[8]", ("no field 'fcnet_hidens'", "fcnet_hiddens")),
        ("training.lr", ("expected PATH=VALUE",)),
        # The flags refuse these; --set must too (RLlib would fail in the trial, or not).
        ("env_runners.num_env_runners=-1", ("num_env_runners must be at least 0",)),
        ("learners.num_gpus_per_learner=-1", ("num_gpus_per_learner must be at least 0",)),
        ("debugging.seed=abc", ("seed must be a whole number", "'abc'")),
    ],
)
def test_bad_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], assignment: str, needles: tuple[str, ...]
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", assignment, storage=storage)
    assert_rejected(capsys, code, storage, *needles)


@pytest.mark.parametrize(
    "flags",
    [
        ("--num-samples", "0"),
        ("--num-env-runners", "-1"),
        ("--num-envs-per-env-runner", "0"),
        ("--num-learners", "-2"),
        ("--num-gpus-per-learner", "-1"),
        ("--checkpoint-every", "0"),
        ("--num-cpus-per-env-runner", "0"),
        ("--num-cpus-per-learner", "-1"),
        ("--max-concurrent-trials", "0"),
        ("--seeds", "0"),
        ("--seed", "x"),
        ("--seed", "4294967296"),  # numpy's seeds end at 2**32 - 1
        ("--num-gpus-per-learner", "nan"),  # every comparison with nan is False
        ("--num-cpus-per-env-runner", "inf"),
        ("--name", "../elsewhere"),  # a folder name: a path would leave --storage-path
        ("--name", "/tmp/elsewhere"),
    ],
)
def test_bad_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, *flags, storage=storage)
    assert_rejected(capsys, code, storage, flags[0])


def test_config_rllib_rejects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", "training.train_batch_size_per_learner=64", storage=storage)
    assert_rejected(capsys, code, storage, "invalid RLlib config", "minibatch_size")


def test_pbt_checkpoints_off_the_perturbation_cadence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    pbt_experiment = ROOT / "experiments" / "pbt_ppo_cartpole.py"
    code = run_main(pbt_experiment, "--checkpoint-every", "3", storage=storage)
    assert_rejected(capsys, code, storage, "perturbs every 5 iterations but checkpoints every 3")


def test_gpus_without_gpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--num-gpus-per-learner", "1", storage=storage)
    assert_rejected(capsys, code, storage, "asks for 1 GPU", "has 0")


def test_unknown_stop_metric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--stop", "episode_retrun_mean=100", storage=storage)
    assert_rejected(capsys, code, storage, "unknown metric", "episode_return_mean")


def test_stop_on_evaluation_results_without_evaluation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """RLlib makes no evaluation results without `evaluation_interval` and Tune only warns
    in its log that the stop key is missing: the run would never stop on it."""
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--stop", "evaluation_return_mean=150", storage=storage)
    assert_rejected(
        capsys, code, storage, "needs evaluation results", "evaluation.evaluation_interval=N"
    )
    code = run_main(
        CARTPOLE,
        *("--stop", "evaluation_return_mean=150"),
        *("--set", "evaluation.evaluation_interval=2"),
        "--resume",  # past every check of the config: refused only for nothing to resume
        storage=storage,
    )
    assert_rejected(capsys, code, storage, "nothing to resume")


@pytest.mark.parametrize(
    ("value", "message"), [("many", "expected a number"), ("nan", "expected a finite number")]
)
def test_stop_value_not_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--stop", f"training_iteration={value}", storage=storage)
    assert_rejected(capsys, code, storage, message)


def test_resume_with_nothing_to_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--resume", storage=storage)
    assert_rejected(capsys, code, storage, "nothing to resume")


def test_storage_path_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = write(tmp_path, "afile", "")
    storage = blocker / "results"
    code = run_main(CARTPOLE, storage=storage)
    assert_rejected(capsys, code, storage, "is a file, not a directory")


def test_storage_path_read_only(capsys: pytest.CaptureFixture[str]) -> None:
    storage = Path("/proc/rlsuite-results")
    code = run_main(CARTPOLE, storage=storage)
    assert_rejected(capsys, code, storage, "not writable")


def test_as_test_without_a_return_to_reach(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    path = write(
        tmp_path,
        "no_return.py",
        "from ray.rllib.algorithms.ppo import PPOConfig\n"
        "from rlsuite import Experiment, metrics\n"
        "experiment = Experiment(config=PPOConfig().environment('classic/cartpole'),"
        " stop={metrics.TRAINING_ITERATION: 1})\n",
    )
    code = run_main(path, "--as-test", storage=storage)
    assert_rejected(capsys, code, storage, "--as-test")


@pytest.mark.parametrize(
    "flags",
    [
        ("--set", "training.lrr=1"),  # refused while parsing
        ("--set", "training.train_batch_size_per_learner=64"),  # refused by RLlib's validate()
    ],
)
def test_cli_process_reports_one_line_and_exit_2(tmp_path: Path, flags: tuple[str, str]) -> None:
    """The same through a real process: no traceback reaches the terminal."""
    run = run_cli(CARTPOLE, *flags, storage=tmp_path / "results")
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and "Traceback" not in run.stderr
    assert not (tmp_path / "results").exists()
