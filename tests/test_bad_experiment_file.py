"""Bad experiment files: missing, not Python, broken, exiting, or an `Experiment` with a
bad field. One line on stderr naming the file and the fix, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import assert_rejected, run_main, write


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
