"""The line per result where no terminal is attached (rlsuite/launcher/progress.py's
ProgressPrinter), and its words for missing and NaN values; the live view on a terminal:
test_live_progress.py."""

import io
import re
from pathlib import Path

import pytest
from ray.tune import Callback

from rlsuite import metrics
from rlsuite.launcher.live import progress_callback
from rlsuite.launcher.progress import ProgressPrinter
from tests.progress_feed import RETURN, STOP, StagedTrial, feed, live_on, rl_result


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
