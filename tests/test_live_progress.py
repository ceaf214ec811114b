"""What the terminal shows while trials run (rlsuite/launcher/live.py): the live view on a
terminal, today's line per result elsewhere, nothing with --quiet.

The callback gets real Tune `Trial`s whose driver staging folders (which a running Ray
session provides) point into tmp_path, and results shaped as RLlib reports them.
"""

from __future__ import annotations

import io
import pickle
import re
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from ray.tune import Callback
from ray.tune.error import TuneError
from ray.tune.execution.placement_groups import PlacementGroupFactory
from ray.tune.experiment import Trial
from ray.tune.schedulers.pbt import PopulationBasedTraining, _PBTTrialState
from rich.console import Console

from rlsuite import metrics
from rlsuite.launcher.live import LiveProgress, progress_callback, stop_live_views
from rlsuite.launcher.live_board import Board
from rlsuite.launcher.progress import ProgressPrinter

STOP = {metrics.TRAINING_ITERATION: 4.0}
RETURN = metrics.EPISODE_RETURN_MEAN


class StagedTrial(Trial):
    """A Tune trial whose driver-side folders are `staging` (Ray's session folder in a run)."""

    def __init__(self, staging: Path, index: int, tag: str = "", **kwargs: Any):
        super().__init__(
            "PPO",
            config={"lr": 3e-4, "clip_param": 0.2},
            trial_id=f"abcde_{index:05d}",
            experiment_tag=tag or f"{index}_lr=0.0003",
            placement_group_factory=PlacementGroupFactory([{"CPU": 1}]),
            **kwargs,
        )
        self.staging = staging
        (staging / self.trial_id).mkdir(parents=True, exist_ok=True)

    @property
    def local_experiment_path(self) -> str:
        return str(self.staging)

    @property
    def local_path(self) -> str:
        return str(self.staging / self.trial_id)


def rl_result(iteration: int, time_s: float, env_steps: int, ret: float, **extra: Any) -> dict:
    """A training result nested as RLlib and Tune report it."""
    flat = {
        metrics.TRAINING_ITERATION: iteration,
        metrics.TIME_TOTAL_S: time_s,
        metrics.ENV_STEPS_SAMPLED_LIFETIME: env_steps,
        metrics.EPISODE_RETURN_MEAN: ret,
        metrics.ENV_STEPS_PER_SECOND: env_steps / time_s,
        **extra,
    }
    nested: dict = {}
    for key, value in flat.items():
        *parents, leaf = key.split("/")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def live_on(console_file: io.StringIO, stop: dict[str, float], num_trials: int) -> LiveProgress:
    callback = progress_callback("auto", stop, RETURN)
    assert isinstance(callback, LiveProgress)
    callback.start(Console(file=console_file, width=120, color_system=None), num_trials)
    return callback


def feed(callback: Callback, trial: Trial, *results: dict, trials: Sequence[Trial] = ()) -> None:
    """Start `trial` and report its `results`, as Tune's controller does; `trials`: all."""
    trial.set_status(Trial.RUNNING)
    trials = list(trials) or [trial]
    callback.on_trial_start(iteration=0, trials=trials, trial=trial)
    for result in results:  # the callbacks, then the trial
        callback.on_trial_result(iteration=0, trials=trials, trial=trial, result=result)
        trial.update_last_result(result)


def test_without_a_terminal_one_line_per_result_as_before(tmp_path: Path, capsys) -> None:
    callback = progress_callback("auto", STOP, RETURN)
    callback.setup(total_num_samples=1)  # pytest's stdout is no terminal
    trial = StagedTrial(tmp_path, 0)
    feed(callback, trial, rl_result(1, 2.0, 128, 20.1), rl_result(2, 4.0, 256, 35.2))
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "[abcde_00000] iter    1  env steps 128  return 20.1  steps/s 64  time 2.0 s",
        "[abcde_00000] iter    2  env steps 256  return 35.2  steps/s 64  time 4.0 s",
    ]
    assert "\x1b" not in out


@pytest.mark.parametrize("mode", ["auto", "lines"])
def test_a_line_shows_the_metric_and_stop_values_that_are_not_the_return(
    tmp_path: Path, capsys, mode: str
) -> None:
    """Self-play's return is 0 in every zero-sum game: its lines show the win rates that its
    metric and stop name, in the results that have them (every few iterations)."""
    stop = {metrics.WIN_RATE_VS_HEURISTIC: 0.9, metrics.ENV_STEPS_SAMPLED_LIFETIME: 500_000}
    callback = progress_callback(mode, stop, metrics.WIN_RATE_VS_RANDOM)
    callback.setup(total_num_samples=1)
    rates = {metrics.WIN_RATE_VS_RANDOM: 0.934, metrics.WIN_RATE_VS_HEURISTIC: 0.4}
    feed(
        callback,
        StagedTrial(tmp_path, 0),
        rl_result(1, 2.0, 128, 0.0),
        rl_result(2, 4.0, 256, 0.0, **rates),
    )
    assert capsys.readouterr().out.splitlines() == [
        "[abcde_00000] iter    1  env steps 128  return 0.0  steps/s 64  time 2.0 s",
        "[abcde_00000] iter    2  env steps 256  return 0.0  steps/s 64  time 4.0 s"
        "  win_rate_vs_random 0.93  win_rate_vs_heuristic 0.40",
    ]


def test_a_metric_that_is_also_a_stop_value_shows_once(tmp_path: Path, capsys) -> None:
    stop = {metrics.WIN_RATE_VS_HEURISTIC: 0.9}
    callback = progress_callback("lines", stop, metrics.WIN_RATE_VS_HEURISTIC)
    feed(callback, StagedTrial(tmp_path, 0), rl_result(1, 2.0, 128, 0.0, **stop))
    (line,) = capsys.readouterr().out.splitlines()
    assert line.endswith("time 2.0 s  win_rate_vs_heuristic 0.90")


def test_a_nan_return_reads_nan_and_a_missing_one_n_a(tmp_path: Path, capsys) -> None:
    """NaN (an env's NaN reward, a diverged loss) is not "no episode finished yet"."""
    callback = progress_callback("lines", STOP, RETURN)
    nan, missing = rl_result(1, 2.0, 128, float("nan")), rl_result(2, 4.0, 256, 0.0)
    group, key = RETURN.split("/")
    del missing[group][key]
    feed(callback, StagedTrial(tmp_path, 0), nan, missing)
    lines = capsys.readouterr().out.splitlines()
    assert [re.search(r"return \S+", line)[0] for line in lines] == ["return nan", "return n/a"]


def test_an_iteration_where_no_episode_ended_reads_n_a_not_nan(tmp_path: Path, capsys) -> None:
    """Ray 2.60 reports such an iteration's return mean as NaN; an env's NaN reward in an
    iteration where episodes ended still reads nan."""
    callback = progress_callback("lines", STOP, RETURN)
    none_ended = rl_result(1, 2.0, 1024, float("nan"), **{metrics.EPISODES_THIS_ITERATION: 0})
    nan_reward = rl_result(2, 4.0, 2048, float("nan"), **{metrics.EPISODES_THIS_ITERATION: 2})
    feed(callback, StagedTrial(tmp_path, 0), none_ended, nan_reward)
    lines = capsys.readouterr().out.splitlines()
    assert [re.search(r"return \S+", line)[0] for line in lines] == ["return n/a", "return nan"]
    screen = io.StringIO()
    board = live_on(screen, STOP, num_trials=1)
    feed(board, StagedTrial(tmp_path, 1), rl_result(1, 2.0, 1024, 35.2), none_ended)
    board.on_experiment_end(trials=[])
    assert "return - (best 35.2)" in screen.getvalue()


def test_a_printer_pickled_before_it_had_a_metric_prints_the_plain_line(
    tmp_path: Path, capsys
) -> None:
    """`--resume` unpickles the callback a run was started with, maybe by an older rlsuite."""
    callback = ProgressPrinter.__new__(ProgressPrinter)  # what unpickling an empty state makes
    rates = {metrics.WIN_RATE_VS_RANDOM: 0.9}
    feed(callback, StagedTrial(tmp_path, 0), rl_result(1, 2.0, 128, 0.0, **rates))
    assert capsys.readouterr().out.splitlines() == [
        "[abcde_00000] iter    1  env steps 128  return 0.0  steps/s 64  time 2.0 s"
    ]


def test_modes() -> None:
    assert type(progress_callback("quiet", STOP, RETURN)) is Callback  # prints nothing
    assert type(progress_callback("lines", STOP, RETURN)) is ProgressPrinter
    with pytest.raises(ValueError, match="choose auto, lines or quiet"):
        progress_callback("loud", STOP, RETURN)


def test_one_trial_shows_a_bar_elapsed_eta_metric_best_and_throughput(tmp_path: Path) -> None:
    screen = io.StringIO()
    callback = live_on(screen, {**STOP, RETURN: 450.0}, num_trials=1)
    trial = StagedTrial(tmp_path, 0)
    feed(callback, trial, rl_result(1, 2.0, 128, 35.2), rl_result(2, 4.0, 256, 20.1))
    trial.set_status(Trial.PAUSED)  # the clock stands still while a trial is not running
    callback.on_experiment_end(trials=[trial])
    shown = screen.getvalue()
    assert "2/4 iter" in shown and "elapsed 0:00:04" in shown and "ETA 0:00:04" in shown
    assert "return 20.1 (best 35.2) / stop at 450" in shown
    assert "env steps 256" in shown and "env steps/s 64" in shown
    assert "━" in shown or "-" in shown  # the bar (ASCII where the encoding is)


def test_the_elapsed_time_counts_the_set_up_and_never_goes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tune's training time leaves out the set-up that the clock counted before the first
    result (a terminal run showed 0:00:18, then 0:00:05 at iteration 1)."""
    now = [0.0]
    monkeypatch.setattr("rlsuite.launcher.live_board.time.monotonic", lambda: now[0])
    board, trial = Board(STOP, RETURN, "max", num_trials=1), StagedTrial(tmp_path, 0)
    trial.set_status(Trial.RUNNING)
    board.add(trial, starting=True)
    shown = [render(board, now, 18.0)]
    now[0] = 20.0
    board.update(trial, {metrics.TIME_TOTAL_S: 5.0, metrics.TRAINING_ITERATION: 1})
    shown.append(render(board, now, 21.0))
    trial.set_status(Trial.TERMINATED)  # no longer running: until its last result
    shown.append(render(board, now, 30.0))
    assert [line.split("elapsed ")[1][:7] for line in shown] == ["0:00:18", "0:00:21", "0:00:20"]


def render(board: Board, now: list[float], at: float) -> str:
    now[0] = at
    screen = io.StringIO()
    Console(file=screen, width=120, color_system=None).print(board.render())
    return screen.getvalue()


def test_a_sweep_table_lists_every_trial(tmp_path: Path) -> None:
    screen = io.StringIO()
    callback = live_on(screen, STOP, num_trials=5)
    trials = [StagedTrial(tmp_path, i) for i in range(4)]  # a fifth not created yet
    for i, trial in enumerate(trials[:3]):
        feed(
            callback,
            trial,
            rl_result(1 + i, 2.0 * (1 + i), 128 * (1 + i), 10.0 * (1 + i)),
            trials=trials,
        )
    trials[2].set_status(Trial.TERMINATED)
    trials[1].set_status(Trial.ERROR)
    callback.stop()
    table = screen.getvalue()
    assert "5 trials: 1 running, 1 error, 1 done, 1 pending, 1 not started" in table
    rows = [line.split() for line in table.splitlines() if line.startswith("abcde_")]
    assert [row[:4] for row in rows] == [
        ["abcde_00000", "running", "1", "10"],
        ["abcde_00001", "error", "2", "20"],
        ["abcde_00002", "done", "3", "30"],
        ["abcde_00003", "pending", "0", "-"],
    ]
    assert [row[-2:] for row in rows][2] == ["iter", "done"]


def test_a_pbt_exploit_prints_one_line_above_the_table(tmp_path: Path) -> None:
    screen = io.StringIO()
    callback = live_on(screen, STOP, num_trials=2)
    source, target = StagedTrial(tmp_path, 0), StagedTrial(tmp_path, 1)
    feed(callback, source, rl_result(2, 4.0, 256, 35.2))
    feed(callback, target, rl_result(2, 4.0, 256, 20.1))
    # Tune's PBT writes its exploit log line itself, in its own format.
    pbt = PopulationBasedTraining(metric=RETURN, mode="max", hyperparam_mutations={"lr": [1e-4]})
    new_config = {**source.config, "lr": 3.6e-4, "clip_param": 0.3}
    pbt._log_config_on_step(
        _PBTTrialState(target), _PBTTrialState(source), target, source, new_config
    )
    target.set_experiment_tag("1_lr=0.0003@perturbed[lr=0.00036]")
    callback.on_trial_result(
        iteration=0, trials=[source, target], trial=source, result=rl_result(3, 6.0, 384, 40.0)
    )
    callback.stop()
    lines = screen.getvalue().splitlines()
    assert lines[0] == (
        "[abcde_00001] PBT exploit abcde_00000 at iteration 2 (return 40 vs 20.1);"
        " explore lr 0.0003 -> 0.00036, clip_param 0.2 -> 0.3"
    )
    perturbations = {
        line.split()[0]: line.split()[5] for line in lines if line.startswith("abcde_")
    }
    assert perturbations == {"abcde_00000": "0", "abcde_00001": "1"}


def test_scheduler_stops_failures_and_restarts_print_a_line(tmp_path: Path) -> None:
    screen = io.StringIO()
    callback = live_on(screen, STOP, num_trials=2)
    stopped, failed = StagedTrial(tmp_path, 0), StagedTrial(tmp_path, 1, max_failures=1)
    feed(callback, stopped, {**rl_result(2, 4.0, 256, 12.5), "done": True})  # ASHA's stop
    feed(callback, failed, rl_result(1, 2.0, 128, 9.0))
    failed.handle_error(TuneError("the env exploded"))
    callback.on_trial_recover(iteration=0, trials=[failed], trial=failed)
    callback.on_trial_error(iteration=0, trials=[failed], trial=failed)
    callback.stop()
    lines = screen.getvalue().splitlines()
    assert lines[0] == "[abcde_00000] stopped by the scheduler at iteration 2 (return 12.5)"
    assert lines[1].startswith("[abcde_00001] failed, restart 1 of 1 from its last checkpoint: ")
    assert lines[2].startswith("[abcde_00001] failed: ") and "the env exploded" in lines[2]
    feed(callback, stopped, {**rl_result(4, 8.0, 512, 30.0), "done": True})  # reached its stop
    assert "stopped by the scheduler at iteration 4" not in screen.getvalue()


def test_the_view_pickles_with_the_run_and_gives_sigterm_back(tmp_path: Path) -> None:
    # A fresh process has no SIGTERM handler; an earlier test of this pytest worker may
    # have left Ray's (ray.init installs one), which the view rightly leaves alone.
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        callback = live_on(io.StringIO(), STOP, num_trials=1)
        assert signal.getsignal(signal.SIGTERM) == callback._on_sigterm
        again = pickle.loads(pickle.dumps(callback))  # Tune keeps its callbacks in tuner.pkl
        assert isinstance(again, LiveProgress) and again._live is None and again._board is None
        stop_live_views()  # what tuner.run does once fit returns or raises
        callback.stop()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, before)
