"""Mistakes RLlib would train on, or runs that could never start: refused before Ray starts,
one line on stderr, exit 2, nothing written."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from pathlib import Path

import pytest

from rlsuite.launcher.cluster import CONNECT_TIMEOUT_S, check_reachable
from rlsuite.run import main
from tests.helpers import ROOT, assert_rejected, run_main, write

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"
DQN = ROOT / "experiments" / "dqn_cartpole.py"

PPO_WITH_SEARCH = '''"""PPO with a search space."""
from ray import tune
from ray.rllib.algorithms.ppo import PPOConfig

from rlsuite import Experiment, metrics

experiment = Experiment(
    config=PPOConfig().environment("classic/cartpole"),
    stop={metrics.TRAINING_ITERATION: 2},
    search={SEARCH},
)
'''


@pytest.mark.parametrize(
    ("assignment", "needles"),
    [
        ("training.lr=-1", ("lr must be a finite number more than 0", "-1")),
        ("training.lr=0", ("lr must be a finite number more than 0",)),
        ("training.lr=1e400", ("lr must be a finite number more than 0", "inf")),
        ("training.lr=[[0, 0.0], [1000, 1e-3]]", ("lr schedule", "<= 0")),
        ("training.gamma=1.5", ("gamma must be in [0, 1]", "1.5")),
        ("training.lambda_=-0.1", ("lambda_ must be in [0, 1]",)),
        ("training.clip_param=0.0", ("clip_param must be more than 0",)),
        ("training.num_epochs=0", ("num_epochs must be at least 1",)),
        ("training.minibatch_size=100000", ("minibatch_size", "train_batch_size_per_learner")),
        ("training.minibatch_size=-5", ("minibatch_size must be at least 1",)),
        ("training.grad_clip=-1", ("grad_clip must be more than 0",)),
        ("evaluation.evaluation_interval=-1", ("evaluation_interval must be at least 0",)),
        # Ray refuses a negative resource only once it runs.
        ("resources.num_cpus_for_main_process=-1", ("num_cpus_for_main_process must be at",)),
        # RLlib's validate() takes these; building the module raised a long traceback.
        ("framework.framework=jax", ("framework must be 'torch'", "'jax'")),
        ("rl_module.model_config.fcnet_hiddens=[-1]", ("fcnet_hiddens=[-1]", "at least 1")),
        ("rl_module.model_config.fcnet_hiddens=[0]", ("fcnet_hiddens=[0]", "at least 1")),
        ("rl_module.model_config.conv_filters=[[0, 3, 1]]", ("conv_filters=[[0, 3, 1]]",)),
    ],
)
def test_out_of_range_value_from_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], assignment: str, needles: tuple[str, ...]
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", assignment, storage=storage)
    assert_rejected(capsys, code, storage, *needles)


def test_lr_schedule_may_anneal_to_zero(tmp_path: Path) -> None:
    from rlsuite.launcher.prepare import load_and_prepare
    from rlsuite.options import RunOptions

    options = RunOptions(
        sets=("training.lr=[[0, 1e-3], [10000, 0.0]]",), storage_path=str(tmp_path)
    )
    prepared = load_and_prepare(CARTPOLE, options)
    assert prepared.experiment.config.lr == [[0, 1e-3], [10000, 0.0]]


def test_tau_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(DQN, "--set", "training.tau=2.0", storage=storage)
    assert_rejected(capsys, code, storage, "tau must be in [0, 1]")


def test_replay_buffer_smaller_than_train_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(DQN, "--set", "training.replay_buffer_config.capacity=8", storage=storage)
    assert_rejected(capsys, code, storage, "replay buffer holds 8 steps")


@pytest.mark.parametrize(
    ("search", "needles"),
    [
        ('{"lrr": tune.loguniform(1e-5, 1e-3)}', ("'lrr' is not a key", "lr")),
        (
            '{"lr": tune.uniform(-1e-3, 1e-3)}',
            ("lr must be a finite number more than 0", "search lr=-0.001"),
        ),
        ('{"gamma": tune.choice([0.99, 1.2])}', ("gamma must be in [0, 1]", "search gamma=1.2")),
        ('{"num_epochs": tune.choice(["many"])}', ("'num_epochs' takes values like", "'many'")),
        ('{"lr": tune.grid_search([1e-3, True])}', ("'lr' takes values like",)),
    ],
)
def test_bad_search_space(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], search: str, needles: tuple[str, ...]
) -> None:
    storage = tmp_path / "results"
    path = write(tmp_path, "searched.py", PPO_WITH_SEARCH.replace("{SEARCH}", search))
    code = run_main(path, storage=storage)
    assert_rejected(capsys, code, storage, *needles)


@pytest.mark.parametrize(
    "flags",
    [
        ("--num-env-runners", "64"),
        ("--num-learners", "64"),
        ("--num-cpus-per-env-runner", "8", "--num-env-runners", "1"),
    ],
)
def test_trial_that_cannot_fit_this_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, *flags, storage=storage)
    assert_rejected(capsys, code, storage, "one trial needs", "CPUs but this machine has")


def test_unreachable_address_fails_in_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a free port on loopback: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--address", f"127.0.0.1:{port}", storage=storage)
    assert_rejected(capsys, code, storage, f"127.0.0.1:{port}", "nothing answers")


def test_object_store_storage_path_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It became a local folder named `s3:` under the working directory."""
    monkeypatch.chdir(tmp_path)
    code = run_main(CARTPOLE, "--smoke", storage=Path("s3://bucket/rlsuite"))
    assert_rejected(capsys, code, tmp_path / "s3:", "object-store URIs are not supported")


@pytest.mark.parametrize(
    ("flags", "needles"),
    [
        (("--name", "a\nb"), ("--name 'a\\nb'", "a results folder name")),
        (("--storage-path", ""), ("--storage-path ''", "./results")),
    ],
)
def test_a_name_or_storage_path_that_is_no_folder(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: tuple[str, ...],
    needles: tuple[str, ...],
) -> None:
    """A newline in a folder name; an empty storage path put the results in the working
    directory."""
    monkeypatch.chdir(tmp_path)
    storage = tmp_path / "results"
    code = main([str(CARTPOLE), "--storage-path", str(storage), *flags])
    assert_rejected(capsys, code, storage, *needles)
    assert not list(tmp_path.iterdir())


def test_address_where_something_else_listens_is_left_to_ray_in_seconds() -> None:
    """A port that answers but speaks no gRPC (here HTTP): the token probe gives up after
    CONNECT_TIMEOUT_S rather than the 40 s Ray's GCS client waited, printing nothing, and
    leaves the verdict to ray.init."""
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        started = time.monotonic()
        check_reachable(f"127.0.0.1:{server.server_address[1]}")
        assert time.monotonic() - started < CONNECT_TIMEOUT_S + 10
    finally:
        server.shutdown()
        server.server_close()


def test_address_without_a_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--address", "localhost", storage=storage)
    assert_rejected(capsys, code, storage, "expected HOST:PORT")


def test_env_config_key_the_env_rejects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", "environment.env_config={'frobnicate': 1}", storage=storage)
    assert_rejected(capsys, code, storage, "classic/cartpole", "'frobnicate'")


def test_unknown_env_suggests_gymnasium_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(CARTPOLE, "--set", "environment.env=CartPole-v9", storage=storage)
    assert_rejected(capsys, code, storage, "unknown env 'CartPole-v9'", "CartPole-v1")


def test_max_failures_flag_reaches_the_experiment(tmp_path: Path) -> None:
    from rlsuite.launcher.prepare import load_and_prepare
    from rlsuite.options import RunOptions

    prepared = load_and_prepare(CARTPOLE, RunOptions(max_failures=3, storage_path=str(tmp_path)))
    assert prepared.experiment.max_failures == 3
    unchanged = load_and_prepare(CARTPOLE, RunOptions(storage_path=str(tmp_path)))
    assert unchanged.experiment.max_failures == 0


def test_aggregators_without_env_runners(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(
        ROOT / "experiments" / "appo_atari.py",
        "--smoke",
        "--num-env-runners",
        "0",
        "--set",
        "learners.num_aggregator_actors_per_learner=2",
        storage=storage,
    )
    assert_rejected(capsys, code, storage, "aggregator", "--num-env-runners")


@pytest.mark.parametrize(
    ("experiment", "flags", "needles"),
    [
        ("optuna_ppo_cartpole", ("--set", "training.lr=5e-4"), ("search sets 'lr'",)),
        ("pbt_ppo_cartpole", ("--set", "training.lr=5e-4"), ("search sets 'lr'",)),
        ("ppo_cartpole", ("--seeds", "2", "--set", "debugging.seed=3"), ("--seeds sets 'seed'",)),
        # one population of both seeds' trials: exploits would copy weights across seeds
        ("pbt_ppo_cartpole", ("--seeds", "2"), ("--seeds 2 with PBT", "--seed $s")),
        ("pb2_ppo_cartpole", ("--seeds", "3"), ("--seeds 3 with PB2", "one population per")),
        ("optuna_ppo_cartpole", ("--set", "lr=5e-4"), ("did you mean training.lr",)),
        ("hyperopt_bert_sst2", ("--set", "lr=5e-5"), ("search sets 'lr'",)),
    ],
)
def test_a_set_the_search_would_replace_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    experiment: str,
    flags: tuple[str, ...],
    needles: tuple[str, ...],
) -> None:
    """Tune's param space lays the search over the config: the edit would not happen."""
    storage = tmp_path / "results"
    code = run_main(ROOT / "experiments" / f"{experiment}.py", "--smoke", *flags, storage=storage)
    assert_rejected(capsys, code, storage, *needles)


def test_a_set_of_a_key_the_config_dict_renames_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The builder's `lambda_` is `lambda` in the config's dict, which the search names."""
    storage = tmp_path / "results"
    search = '{"lambda": tune.uniform(0.9, 1.0)}'
    path = write(tmp_path, "searched.py", PPO_WITH_SEARCH.replace("{SEARCH}", search))
    code = run_main(path, "--set", "training.lambda_=0.95", storage=storage)
    assert_rejected(capsys, code, storage, "search sets 'lambda'")
