"""Bad input: one line on stderr naming the problem and the fix, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ROOT, assert_rejected, run_cli, run_main, write

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(tmp_path / "nope.py", storage=storage)
    assert_rejected(capsys, code, storage, "nope.py", "no such file")


def test_not_python(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(write(tmp_path, "exp.yaml", "a: 1\n"), storage=storage)
    assert_rejected(capsys, code, storage, "exp.yaml", "not a Python file")


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe\x00\x81binary", "experiment = 1\n".encode("utf-16-le")],  # UTF-16: no BOM
)
def test_binary_file_with_py_suffix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    storage = tmp_path / "results"
    path = tmp_path / "exp.py"
    path.write_bytes(content)
    code = run_main(path, storage=storage)
    assert_rejected(capsys, code, storage, "not a Python file (not UTF-8 text)")


def test_syntax_error_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    path = write(tmp_path, "broken.py", '"""Doc."""\nx = 1\nexperiment = (\n')
    code = run_main(path, storage=storage)
    assert_rejected(capsys, code, storage, "broken.py:3", "syntax error")


def test_error_raised_by_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    path = write(tmp_path, "raises.py", "import not_a_module_anywhere\n")
    code = run_main(path, storage=storage)
    assert_rejected(capsys, code, storage, "raises.py:1", "ModuleNotFoundError")


PPO = "from ray.rllib.algorithms.ppo import PPOConfig\nfrom rlsuite import PBT, Experiment\n"
CONFIG = "PPOConfig().environment('classic/cartpole')"


@pytest.mark.parametrize(
    ("source", "needles"),
    [
        # A file that parses arguments (argparse exits) or exits: was a silent exit 2 or 0.
        ("import sys\nsys.exit('usage: bad.py --lr LR')\n", (":2", "exited", "usage: bad.py")),
        ("exit()\n", ("exited while loading", "no argument parsing or exit()")),
        # Tune refuses these only once Ray runs, or divides by zero (a PBT cadence of 0).
        (f"{PPO}experiment = Experiment({CONFIG}, {{}}, num_samples=0)\n", (":3", "num_samples=0")),
        (f"{PPO}Experiment({CONFIG}, {{}}, checkpoint_every=0)\n", ("checkpoint_every=0",)),
        (f"{PPO}Experiment({CONFIG}, {{}}, mode='maximize')\n", ("'max' or 'min'",)),
        # Tune would run 2 samples, or checkpoint at no iteration.
        (f"{PPO}Experiment({CONFIG}, {{}}, num_samples=2.5)\n", ("num_samples=2.5", "whole")),
        (f"{PPO}Experiment({CONFIG}, {{}}, checkpoint_every=2.5)\n", ("checkpoint_every=2.5",)),
        (f"{PPO}Experiment({CONFIG}, {{1: 5}})\n", ("stop={1: ...}", "result key names")),
        (f"{PPO}PBT({{'lr': [1e-3]}}, perturbation_interval=0)\n", ("PBT(perturbation_int",)),
        (f"{PPO}PBT({{'lr': [1e-3]}}, quantile_fraction=0.6)\n", ("must be in [0, 0.5]",)),
        (f"{PPO}PBT({{}})\n", ("PBT(hyperparam_mutations={})", "at least one config key")),
        (f"{PPO}PBT({{'lr': [1]}}, resample_probability=2)\n", ("resample_probability=2",)),
        ("from rlsuite import PB2\nPB2({'lr': (1e-3, 1e-4)})\n", ("low below high",)),
        # RLlib's old API stack names: the new stack never reports them (Tune only warns).
        (f"{PPO}Experiment({CONFIG}, {{'episode_reward_mean': 4}})\n", ("use 'episode_return_",)),
        (f"{PPO}Experiment({CONFIG}, {{}}, metric='timesteps_total')\n", ("use 'env_steps'",)),
        ("from rlsuite import ASHA\nASHA(time_attr='timesteps_total')\n", ("ASHA(time_attr",)),
        # Tune's own objects, or no dict: an AttributeError or TypeError once Ray ran.
        (
            f"{PPO}from ray.tune.schedulers import ASHAScheduler\n"
            f"Experiment({CONFIG}, {{}}, scheduler=ASHAScheduler())\n",
            ("scheduler=AsyncHyperBandScheduler(...)", "use rlsuite.ASHA"),
        ),
        (
            f"{PPO}from ray.tune.search.basic_variant import BasicVariantGenerator\n"
            f"Experiment({CONFIG}, {{}}, searcher=BasicVariantGenerator())\n",
            ("searcher=BasicVariantGenerator(...)", "use rlsuite.Optuna"),
        ),
        (f"{PPO}Experiment({CONFIG}, None)\n", ("Experiment(stop=NoneType)", "a dict")),
    ],
)
def test_a_file_that_exits_or_sets_a_bad_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, needles: tuple[str, ...]
) -> None:
    storage = tmp_path / "results"
    code = run_main(write(tmp_path, "bad.py", source), storage=storage)
    assert_rejected(capsys, code, storage, "bad.py", *needles)


@pytest.mark.parametrize(
    ("stop", "needles"),
    [
        # --stop refuses these; in the file they were a trial that never stops.
        ("{'training_iteration': float('nan')}", ("must be a finite number", "nan")),
        ("{'training_iteration': float('inf')}", ("must be a finite number", "inf")),
    ],
)
def test_a_stop_in_the_file_that_never_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stop: str, needles: tuple[str, ...]
) -> None:
    storage = tmp_path / "results"
    code = run_main(
        write(tmp_path, "bad.py", f"{PPO}experiment = Experiment({CONFIG}, {stop})\n"),
        storage=storage,
    )
    assert_rejected(capsys, code, storage, "stop value of 'training_iteration'", *needles)


def test_a_metric_no_result_has(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Tune only warns, and the run would pick its best trial by nothing."""
    storage = tmp_path / "results"
    source = f"{PPO}experiment = Experiment({CONFIG}, {{'training_iteration': 1}}, metric='episode_retrun_mean')\n"
    code = run_main(write(tmp_path, "bad.py", source), storage=storage)
    assert_rejected(
        capsys, code, storage, "metric='episode_retrun_mean'", "did you mean episode_return_mean"
    )


def test_a_metric_of_the_experiments_own_callbacks_passes() -> None:
    from rlsuite.launcher.checks import check_metric

    check_metric("env_runners/success_rate")  # no known metric is close: not a typo


def test_no_experiment_attribute(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(write(tmp_path, "empty.py", "x = 1\n"), storage=storage)
    assert_rejected(capsys, code, storage, "defines no `experiment`")


def test_experiment_of_wrong_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(write(tmp_path, "wrong.py", "experiment = {'lr': 1}\n"), storage=storage)
    assert_rejected(capsys, code, storage, "is a dict, not an rlsuite.Experiment")


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
