"""Searchers (rlsuite.Optuna, HyperOpt, BOHB, BayesOpt): each suggests only values inside its
space, --smoke keeps it and runs one trial at a time, what it cannot take is refused before
Ray starts, and a killed sweep resumed with --resume neither repeats a trial nor restarts
its budget."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ray import tune
from ray.tune.schedulers import HyperBandForBOHB

from rlsuite import BOHB, BayesOpt, HyperOpt, Optuna, search
from rlsuite.launcher.loader import load_experiment
from rlsuite.launcher.smoke import smoke
from rlsuite.launcher.tuner import _tune_config
from rlsuite.reporting import runs, sweep
from rlsuite.results import read_results
from tests.helpers import ROOT, assert_rejected, run_cli, run_main, write

OPTUNA_CARTPOLE = ROOT / "experiments" / "optuna_ppo_cartpole.py"
BOHB_RESNET = ROOT / "experiments" / "bohb_resnet_cifar10.py"

SPACE = {
    "lr": tune.loguniform(1e-5, 1e-2),
    "clip_param": tune.uniform(0.1, 0.4),
    "num_epochs": tune.randint(1, 5),
    "minibatch_size": tune.choice([64, 128, 256]),
}
CONTINUOUS = {"lr": tune.loguniform(1e-5, 1e-2), "clip_param": tune.uniform(0.1, 0.4)}


def _suggestions(searcher: search.Searcher, space: dict[str, Any], count: int) -> list[dict]:
    """`count` suggestions from the built Tune searcher, each trial completed with a score
    before the next, so that the model-guided ones (past the random starts) come too."""
    tune_searcher = searcher.build("score", "max")
    assert tune_searcher.set_search_properties("score", "max", {**space, "gamma": 0.99})
    scores = np.random.default_rng(0).normal(size=count)  # noise: no optimum to converge on
    suggested = []
    for index in range(count):
        config = tune_searcher.suggest(f"t{index}")
        assert isinstance(config, dict)
        suggested.append(config)
        tune_searcher.on_trial_complete(f"t{index}", {"score": float(scores[index])})
    return suggested


@pytest.mark.parametrize(
    ("searcher", "space"),
    [
        (Optuna(seed=0, random_starts=3), SPACE),
        (HyperOpt(seed=0, random_starts=3), SPACE),
        (BOHB(seed=0), SPACE),
        (BayesOpt(seed=0, random_starts=3), CONTINUOUS),
    ],
    ids=["optuna", "hyperopt", "bohb", "bayesopt"],
)
def test_suggests_only_values_inside_its_space(
    searcher: search.Searcher, space: dict[str, Any]
) -> None:
    point = {key: domain.sample() for key, domain in space.items()}
    point = {k: v.item() if isinstance(v, np.generic) else v for k, v in point.items()}
    searcher = dataclasses.replace(searcher, points_to_evaluate=[point])
    suggested = _suggestions(searcher, space, 8)
    assert {k: suggested[0][k] for k in space} == pytest.approx(point), "points go first"
    for config in suggested:
        for key, domain in space.items():
            value = config[key]
            assert not isinstance(value, np.generic), f"{key}: numpy {type(value).__name__}"
            assert search._inside(domain, value), f"{type(searcher).__name__} {key}={value}"
    assert len({json.dumps(c, sort_keys=True, default=str) for c in suggested}) > 1


def test_smoke_keeps_the_searcher_one_trial_at_a_time() -> None:
    experiment = load_experiment(OPTUNA_CARTPOLE)
    small = smoke(experiment)
    assert isinstance(small.searcher, Optuna)
    assert small.searcher.max_concurrent == 1
    assert small.num_samples == 2
    # The two smallest minibatches fit smoke's train batch of 128; the file's known good
    # point (minibatch 256) no longer lies inside the space and is dropped.
    assert small.search["minibatch_size"].categories == [64, 128]
    assert small.searcher.points_to_evaluate == ()
    config = _tune_config(small, max_concurrent_trials=None)
    assert config.search_alg.max_concurrent == 1
    assert experiment.searcher is not None and experiment.searcher.max_concurrent == 2


def test_bohb_brings_hyperband_over_the_stop_budget() -> None:
    experiment = load_experiment(BOHB_RESNET)
    config = _tune_config(experiment, max_concurrent_trials=2)
    assert isinstance(config.scheduler, HyperBandForBOHB)
    assert config.scheduler._max_t_attr == 81
    assert config.search_alg.max_concurrent == 2, "the smaller limit wins"
    assert config.max_concurrent_trials is None, "one limit: the searcher's"
    small = _tune_config(smoke(experiment), max_concurrent_trials=None)
    assert isinstance(small.scheduler, HyperBandForBOHB)
    assert small.scheduler._max_t_attr == 2


def test_bohb_scheduler_keeps_its_own_call_signature_under_the_suite_s_wrapper() -> None:
    """HyperBandForBOHB calls `choose_trial_to_run(..., allow_recurse=False)` on itself
    once a bracket is processed; the launcher's SIGTERM wrapper took one argument only,
    and a BOHB sweep of 8 trials died there (found by scripts/bench_search.py)."""
    scheduler = _tune_config(load_experiment(BOHB_RESNET), max_concurrent_trials=2).scheduler
    assert isinstance(scheduler, HyperBandForBOHB)

    class NoTrials:
        def get_trials(self) -> list:
            return []

    assert scheduler.choose_trial_to_run(NoTrials(), allow_recurse=False) is None


EXPERIMENT = '''"""A searcher experiment."""
from ray import tune
from ray.rllib.algorithms.ppo import PPOConfig

from rlsuite import ASHA, BOHB, PBT, BayesOpt, Experiment, Optuna, metrics

experiment = Experiment(
    config=PPOConfig().environment("classic/cartpole"),
    stop={STOP},
    search={SEARCH},
    SETTINGS
)
'''
LR = '{"lr": tune.loguniform(1e-4, 1e-2)}'
ITERATIONS = "{metrics.TRAINING_ITERATION: 2}"


@pytest.mark.parametrize(
    ("search_space", "stop", "settings", "needles"),
    [
        (
            '{"lr": tune.loguniform(1e-4, 1e-2), "minibatch_size": tune.choice([64, 128])}',
            ITERATIONS,
            "searcher=BayesOpt(),",
            ("BayesOpt searches continuous spaces only", "'minibatch_size'", "tune.uniform"),
        ),
        (LR, "{metrics.EPISODE_RETURN_MEAN: 450}", "searcher=BOHB(),", ("BOHB needs a budget",)),
        (LR, ITERATIONS, "searcher=BOHB(), scheduler=ASHA(),", ("BOHB brings its own",)),
        (
            LR,
            ITERATIONS,
            'searcher=Optuna(), scheduler=PBT(hyperparam_mutations={"lr": [1e-3, 1e-4]}, perturbation_interval=10),',
            ("Optuna with PBT", "cannot follow"),
        ),
        ("{}", ITERATIONS, "searcher=Optuna(),", ("Optuna has nothing to search",)),
        (
            '{"lrr": tune.loguniform(1e-4, 1e-2)}',
            ITERATIONS,
            "searcher=Optuna(),",
            ("'lrr' is not a key",),
        ),
        (
            '{"lr": tune.grid_search([1e-3, 1e-4])}',
            ITERATIONS,
            "searcher=Optuna(),",
            ("cannot take a grid search", "tune.choice"),
        ),
        (
            LR,
            ITERATIONS,
            'searcher=Optuna(points_to_evaluate=[{"lr": 0.5}]),',
            ("points_to_evaluate[0]", "outside its search domain"),
        ),
        (LR, ITERATIONS, "searcher=Optuna(max_concurrent=0),", ("max_concurrent must be",)),
    ],
    ids=[
        "bayesopt-categorical",
        "bohb-no-budget",
        "bohb-with-asha",
        "searcher-with-pbt",
        "empty-space",
        "unknown-key",
        "grid",
        "point-outside",
        "no-concurrency",
    ],
)
def test_refused_before_ray_starts(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    search_space: str,
    stop: str,
    settings: str,
    needles: tuple[str, ...],
) -> None:
    text = EXPERIMENT.replace("{SEARCH}", search_space).replace("{STOP}", stop)
    path = write(tmp_path, "searcher.py", text.replace("SETTINGS", settings))
    storage = tmp_path / "results"
    assert_rejected(capsys, run_main(path, storage=storage), storage, *needles)


def test_seeds_flag_makes_a_grid_a_searcher_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = tmp_path / "results"
    code = run_main(OPTUNA_CARTPOLE, "--seeds", "2", storage=storage)
    assert_rejected(capsys, code, storage, "grid search", "--seeds")


def test_missing_package_is_named_with_its_install_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if optuna were not installed: the module the searcher imports cannot be found.
    monkeypatch.setattr(Optuna, "modules", ("optuna_not_installed",))
    storage = tmp_path / "results"
    code = run_main(OPTUNA_CARTPOLE, storage=storage)
    assert_rejected(capsys, code, storage, "optuna_not_installed", "pip install 'optuna==5.0.0'")


def _rows(trial_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (trial_dir / "result.json").read_text().splitlines()]


SWEEP_FLAGS = ("--smoke", "--num-samples", "3")


def _one_finished_and_another_started(sweep_dir: Path) -> bool:
    # read_results skips a line Tune is still writing: the trial runs while this reads.
    trial_dirs = list(sweep_dir.glob("PPO_*"))
    finished = [d for d in trial_dirs if len(read_results(d / "result.json")) == 2]
    return bool(finished) and len(trial_dirs) >= 2


def _sweep_listing(sweep_dir: Path) -> str:
    """What the sweep left after 300 s, with any trial's error, for the failure message."""
    lines = ["no trial finished and a second started in 300 s:"]
    for trial_dir in sorted(sweep_dir.glob("PPO_*")):
        rows = len(read_results(trial_dir / "result.json"))
        lines.append(f"{trial_dir.name}: {rows} result rows")
        if (trial_dir / "error.txt").exists():
            lines.append((trial_dir / "error.txt").read_text()[-1500:])
    return "\n".join(lines)


def test_killed_sweep_resumes_without_repeating_a_trial(tmp_path: Path) -> None:
    """Three smoke trials one at a time; the driver is killed once one finished and the
    next started, then --resume runs the rest: three trials in all, all different."""
    storage = tmp_path / "results"
    sweep_dir = storage / OPTUNA_CARTPOLE.stem
    command = [sys.executable, "-m", "rlsuite.run", str(OPTUNA_CARTPOLE), *SWEEP_FLAGS]
    with (tmp_path / "driver.err").open("w") as driver_stderr:
        driver = subprocess.Popen(
            [*command, "--storage-path", str(storage)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=driver_stderr,
            start_new_session=True,
        )
    deadline = time.monotonic() + 300
    while not _one_finished_and_another_started(sweep_dir):
        driver_err = (tmp_path / "driver.err").read_text()[-2000:]
        assert driver.poll() is None, driver_err
        if time.monotonic() > deadline:
            os.killpg(driver.pid, signal.SIGKILL)
            raise AssertionError(f"{_sweep_listing(sweep_dir)}\n{driver_err}")
        time.sleep(0.5)
    time.sleep(2)  # let Tune write its experiment and searcher state once more
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and everything it started
    driver.wait(timeout=60)
    first = {d.name: len(_rows(d)) for d in sweep_dir.glob("PPO_*") if (d / "result.json").exists()}
    finished = [name for name, rows in first.items() if rows == 2]
    assert finished, f"no trial finished before the kill: {first}"

    resumed = run_cli(OPTUNA_CARTPOLE, *SWEEP_FLAGS, "--resume", storage=storage, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    trials = resumed.summary(OPTUNA_CARTPOLE.stem)["trials"]
    assert len(trials) == 3, "the budget counts the trials finished before the kill"
    assert all(t["status"] == "OK" for t in trials)
    params = [json.loads((sweep_dir / t["trial"] / "params.json").read_text()) for t in trials]
    searched = {json.dumps({k: p[k] for k in ("lr", "clip_param")}) for p in params}
    assert len(searched) == 3, "no configuration is suggested twice"
    for name in finished:
        assert len(_rows(sweep_dir / name)) == first[name], f"{name} ran again"

    # The report's sweep section: the three trials ranked, a best-so-far curve.
    config = runs.load(sweep_dir)
    assert sweep.searched_keys(config) == sorted(sweep.searched_keys(config))
    assert {"lr", "clip_param"} <= set(sweep.searched_keys(config))
    best = sweep.best_so_far(config)
    assert len(best) == 3 and np.all(np.diff(best[np.isfinite(best)]) >= 0)
    lines = sweep.section(config, tmp_path)
    assert (tmp_path / f"sweep_{config.label}.png").exists()
    assert sum(line.startswith("| 1 | PPO_") for line in lines) == 1
