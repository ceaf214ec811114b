"""`--resume` refused in one line, before Ray, where Tune would drop or fail what was asked:
another stop, checkpoint cadence, restarts, trial count, seeds, concurrency limit or config
than the run's (an edited experiment file, another --set), damaged Tune state, a lost
latest checkpoint. Each on a copy of conftest's smoke CartPole runs (`finished_run`, and
`cartpole_seeds_run` for seeds)."""

from __future__ import annotations

import json
import pickle
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from ray import cloudpickle, tune

from rlsuite.errors import UsageError
from rlsuite.launcher.prepare import load_and_prepare
from rlsuite.launcher.resume_checks import check_same_config
from rlsuite.options import RunOptions
from tests.helpers import CARTPOLE_RUN as RUN
from tests.helpers import CARTPOLE_RUN_FLAGS as SAME_RUN
from tests.helpers import ROOT, digest, run_main

CARTPOLE = ROOT / "experiments" / "ppo_cartpole.py"


OTHER_SETTINGS = "the run was started with another "


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (
            ("--stop", "training_iteration=5"),
            f"{OTHER_SETTINGS}stop (training_iteration=2 there, training_iteration=5 now)",
        ),
        (("--checkpoint-every", "3"), f"{OTHER_SETTINGS}checkpoints (--checkpoint-every"),
        (("--max-failures", "2"), f"{OTHER_SETTINGS}--max-failures (0 there, 2 now)"),
        (
            ("--set", "training.entropy_coeff=0.5"),  # the file keeps RLlib's default, 0
            "the experiment now sets entropy_coeff (0 there, 0.5 now)",
        ),
        (("--num-samples", "2"), f"{OTHER_SETTINGS}--num-samples (1 there, 2 now)"),
        (("--seeds", "2"), f"{OTHER_SETTINGS}--seeds (none there, 2 seeds from 0 now)"),
        (
            ("--max-concurrent-trials", "1"),
            f"{OTHER_SETTINGS}--max-concurrent-trials (as many as resources allow there, 1 now)",
        ),
        # Tune restores the run's callbacks, trackers included: this one would never log.
        (
            ("--mlflow", "sqlite:///never-made.db"),
            f"{OTHER_SETTINGS}--mlflow (none there, sqlite:///never-made.db now)",
        ),
    ],
    ids=[
        "stop",
        "checkpoint-every",
        "max-failures",
        "config",
        "num-samples",
        "seeds",
        "max-concurrent-trials",
        "mlflow",
    ],
)
def test_resume_with_other_run_settings_is_one_line(
    finished_run: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], named: str
) -> None:
    """Tune restores a run with its own stop, checkpoints and restarts (Tuner.restore takes
    no RunConfig) and each trial with the config it started with: another one given with
    --resume (a flag, a --set, an edited experiment file) would be dropped without a word."""
    before = digest(finished_run)
    code = run_main(CARTPOLE, *SAME_RUN, *flags, "--resume", storage=finished_run)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert named in lines[0] and "--overwrite" in lines[0], lines[0]
    assert digest(finished_run) == before


def test_resume_compares_the_constant_config_values_only(tmp_path: Path) -> None:
    """Searched and perturbed keys differ from trial to trial, a function's repr and a
    set's order from process to process, an absolute data path with the directory the
    command ran in: none is a change. A changed constant is, and an added or removed
    entry of a dict (env_config), NaN equals NaN."""
    trial = tmp_path / "PPO_0"
    trial.mkdir()
    saved = {
        "lr": 0.1,
        "gamma": 0.99,
        "fn": "<function f at 0x7f01>",
        "train": "{'b', 'a'}",  # Tune's str() of a set
        "data_path": "/home/a/data/sst2",
        "clip": float("nan"),
        "env_config": {"n": 3, "k": 0},
    }
    (trial / "params.json").write_text(json.dumps(saved))
    space = {
        "lr": tune.uniform(0, 1),
        "gamma": 0.99,
        "fn": lambda: 0,
        "train": {"a", "b"},
        "data_path": "/mnt/b/data/sst2",
        "clip": float("nan"),
        "env_config": {"n": 3, "k": 0},
    }
    check_same_config(tmp_path, {**space, "lr": 0.5}, varied=["lr"])
    check_same_config(tmp_path, space, varied=[])  # a search domain is no constant
    grid = {"env_config": {"n": tune.grid_search([3, 4]), "k": 0}}  # Tune wrote the value it drew
    check_same_config(tmp_path, {**space, **grid}, varied=["lr"])
    for changed, named in (
        ({"env_config": {"n": 4, "k": 0}}, r"env_config/n \(3 there, 4 now\)"),
        ({"env_config": {"n": 3, "k": 0, "m": 1}}, r"env_config/m \(absent there, 1 now\)"),
        ({"env_config": {"k": 0}}, r"env_config/n \(3 there, absent now\)"),
        ({"data_path": "/mnt/b/data/mnli"}, r"data_path"),
    ):
        with pytest.raises(UsageError, match=named):
            check_same_config(tmp_path, {**space, **changed}, varied=["lr"])


def test_entries_given_to_a_dict_that_was_empty_or_none_are_compared(tmp_path: Path) -> None:
    """Tune's flattening drops empty dicts, so a key later given under an `env_config` that
    was empty had nothing to be compared with; a None that became a dict neither. A
    DefaultModelConfig is compared as Tune wrote it, its repr."""
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    model = DefaultModelConfig(fcnet_hiddens=[64])
    trial = tmp_path / "PPO_0"
    trial.mkdir()
    saved = {"lr": 0.1, "env_config": {}, "evaluation_config": None, "model": str(model)}
    (trial / "params.json").write_text(json.dumps(saved))
    space = {"lr": 0.1, "env_config": {}, "evaluation_config": None, "model": model}
    check_same_config(tmp_path, space, varied=[])
    for changed, named in (
        ({"env_config": {"repeat_action_probability": 0.25}}, r"env_config \({} there, entr"),
        ({"evaluation_config": {"explore": False}}, r"evaluation_config \(null there, entr"),
        ({"model": DefaultModelConfig(fcnet_hiddens=[256])}, r"model \(.*64.* there, .*256"),
    ):
        with pytest.raises(UsageError, match=named):
            check_same_config(tmp_path, {**space, **changed}, varied=[])
    (trial / "params.json").write_text(json.dumps({**saved, "env_config": {"frameskip": 4}}))
    with pytest.raises(UsageError, match=r"env_config \({} now, entries there\)"):
        check_same_config(tmp_path, space, varied=[])


@pytest.mark.parametrize("damaged", ["tuner.pkl", "experiment_state"])
def test_damaged_tune_state_is_named_on_resume(
    finished_run: Path, capsys: pytest.CaptureFixture[str], damaged: str
) -> None:
    storage = finished_run
    run_dir = storage / RUN
    target = (
        run_dir / "tuner.pkl"
        if damaged == "tuner.pkl"
        else next(run_dir.glob("experiment_state-*.json"))
    )
    target.write_bytes(target.read_bytes()[: len(target.read_bytes()) // 2])
    before = digest(storage)
    code = run_main(CARTPOLE, *SAME_RUN, "--resume", storage=storage)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert target.name in lines[0] and "damaged" in lines[0] and "--overwrite" in lines[0]
    assert digest(storage) == before


def test_resume_without_the_latest_checkpoint_is_one_line(
    finished_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trial to continue whose latest checkpoint folder was deleted (to free disk): Tune
    restores from that one only, and failed the trial after Ray started."""
    run_dir = finished_run / RUN
    state_file = max(run_dir.glob("experiment_state-*.json"), key=lambda p: p.stat().st_mtime)
    state = json.loads(state_file.read_text())
    trial_state = state["trial_data"][0][0]
    assert '"status": "TERMINATED"' in trial_state
    state["trial_data"][0][0] = trial_state.replace('"TERMINATED"', '"PAUSED"')  # paused by Ctrl-C
    state_file.write_text(json.dumps(state))
    (trial,) = json.loads((run_dir / "summary.json").read_text())["trials"]
    latest = run_dir / trial["trial"] / Path(trial["checkpoint"]).name  # in this copy
    shutil.rmtree(latest)
    before = digest(finished_run)
    code = run_main(CARTPOLE, *SAME_RUN, "--resume", storage=finished_run)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert f"latest checkpoint {latest} is gone" in lines[0], lines[0]
    assert "--overwrite" in lines[0]
    assert digest(finished_run) == before


def test_the_command_that_started_a_run_passes_the_resume_checks(finished_run: Path) -> None:
    """What the refusals above compare reads the same on both sides for the same flags."""
    options = RunOptions(smoke=True, name=RUN, seed=0, resume=True, storage_path=str(finished_run))
    load_and_prepare(CARTPOLE, options)


SEEDS_RUN = "ppo"
"""conftest's `cartpole_seeds_run`: `--smoke --seeds 2 --quiet --name ppo`."""


@pytest.mark.parametrize(
    ("seeds", "named"),
    [
        ({"seeds": 3}, "--seeds (2 seeds from 0 there, 3 seeds from 0 now)"),
        ({"seeds": 2, "seed": 5}, "--seeds (2 seeds from 0 there, 2 seeds from 5 now)"),
        ({}, "--seeds (2 seeds from 0 there, none now)"),
    ],
    ids=["more", "others", "none"],
)
def test_resume_with_other_seeds_is_refused_before_ray(
    cartpole_seeds_run: Path, tmp_path: Path, seeds: dict[str, int], named: str
) -> None:
    """Tune restores its variant generator with the seed grid the run started with, and
    `seed` is a searched key (check_same_config skips it): `--seeds 3` would run 2."""
    storage = tmp_path / "seeds"
    shutil.copytree(cartpole_seeds_run, storage / SEEDS_RUN)
    same = RunOptions(smoke=True, name=SEEDS_RUN, seeds=2, quiet=True, resume=True)
    load_and_prepare(CARTPOLE, replace(same, storage_path=str(storage)))
    other = RunOptions(
        smoke=True, name=SEEDS_RUN, quiet=True, resume=True, storage_path=str(storage), **seeds
    )
    with pytest.raises(UsageError) as refused:
        load_and_prepare(CARTPOLE, other)
    assert named in str(refused.value) and "--overwrite" in str(refused.value)


def test_resume_keeps_the_run_s_concurrency_limit(finished_run: Path) -> None:
    """Tune restores the run's own TuneConfig, its max_concurrent_trials with it: the same
    limit again passes, another is refused rather than dropped."""
    tuner_file = finished_run / RUN / "tuner.pkl"
    saved = pickle.loads(tuner_file.read_bytes())
    saved["_tune_config"].max_concurrent_trials = 1  # as `--max-concurrent-trials 1` saves it
    tuner_file.write_bytes(cloudpickle.dumps(saved))  # as Tune writes it
    options = RunOptions(smoke=True, name=RUN, seed=0, resume=True, storage_path=str(finished_run))
    load_and_prepare(CARTPOLE, replace(options, max_concurrent_trials=1))
    with pytest.raises(UsageError, match=r"--max-concurrent-trials \(1 there, 2 now\)"):
        load_and_prepare(CARTPOLE, replace(options, max_concurrent_trials=2))


def test_the_trackers_a_run_started_with_match_the_same_flags_again() -> None:
    """What `--resume` compares: the trackers in the run's pickled callbacks against the
    flags given now; the same flags match (a run resumed as it was started passes)."""
    pytest.importorskip("mlflow")
    from rlsuite.launcher import resume_settings
    from rlsuite.tracking import Tracking
    from rlsuite.tracking.mlflow_runs import MlflowTracking

    saved = [MlflowTracking("sqlite:///m.db", "cartpole", {}, frozenset())]
    same = Tracking(mlflow="sqlite:///m.db")
    there = resume_settings._saved_trackers(saved)
    assert there == {"--mlflow": "sqlite:///m.db", "--mlflow-experiment": "cartpole"}
    asked = resume_settings._asked_trackers(same, name="cartpole")
    assert all(there.get(flag) == value for flag, value in asked.items())
    other = resume_settings._asked_trackers(Tracking(mlflow="sqlite:///m.db"), name="other")
    assert other["--mlflow-experiment"] != there["--mlflow-experiment"]
