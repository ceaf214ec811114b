"""What the terminal shows while trials run (rlsuite/launcher/live.py): the live view on a
terminal, nothing with --quiet; the line per result elsewhere: test_progress_lines.py.

The callback gets real Tune `Trial`s whose driver staging folders (which a running Ray
session provides) point into tmp_path, and results shaped as RLlib reports them
(tests/progress_feed.py).
"""

import io
import pickle
import signal
from pathlib import Path

import pytest
from ray.tune.error import TuneError
from ray.tune.experiment import Trial
from ray.tune.schedulers.pbt import PopulationBasedTraining, _PBTTrialState
from rich.console import Console

from rlsuite import metrics
from rlsuite.launcher.live import LiveProgress, stop_live_views
from rlsuite.launcher.live_board import Board
from tests.progress_feed import RETURN, STOP, StagedTrial, feed, live_on, rl_result


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
