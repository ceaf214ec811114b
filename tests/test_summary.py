"""What a run leaves after its trials: the summary line per trial and summary.json (the
progress lines while trials run: test_live_progress.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
from ray.train._internal.storage import StorageContext
from ray.tune import ResultGrid
from ray.tune.analysis import ExperimentAnalysis
from ray.tune.error import TuneError
from ray.tune.experiment import Trial

from rlsuite import metrics
from rlsuite.launcher.summary import TrialSummary, summarize, was_interrupted, write_summary
from tests.helpers import nested
from tests.progress_feed import StagedTrial, rl_result

NAN = float("nan")


def test_a_nan_return_reads_nan_in_the_summary_line_and_null_in_its_file(tmp_path: Path) -> None:
    summary = TrialSummary(
        trial="PPO_0",
        status="OK",
        iterations=3,
        env_steps=384.0,
        episode_return_mean=float("nan"),
        best_episode_return_mean=12.0,
        wall_time_s=1.0,
        checkpoint=None,
        error=None,
    )
    assert "return nan (best 12.0)" in summary.line()
    write_summary(tmp_path / "summary.json", [summary])
    text = (tmp_path / "summary.json").read_text()
    assert "NaN" not in text  # not JSON: other readers would fail on it
    trial = json.loads(text)["trials"][0]
    assert trial["episode_return_mean"] is None and trial["best_episode_return_mean"] == 12.0


def _result(history: dict[str, list[float]]) -> SimpleNamespace:
    """A finished trial's `ray.tune.Result` as `summarize` reads it: its last result nested
    as Tune reports it, and every iteration's flattened as `metrics_dataframe` has them."""
    frame = pd.DataFrame(history)
    last: dict[str, Any] = {"done": True, **nested(dict(frame.iloc[-1].items()))}
    return SimpleNamespace(
        metrics=last, metrics_dataframe=frame, path="/runs/PPO_0", checkpoint=None, error=None
    )


def test_a_last_iteration_that_ended_no_episode_sums_up_with_the_last_return() -> None:
    """Pong's 2,000-step episodes and 1,024-step iterations: the summary was "return n/a"."""
    result = _result(
        {
            metrics.TRAINING_ITERATION: [1, 2, 3],
            metrics.EPISODE_RETURN_MEAN: [-21.0, -12.0, NAN],
            metrics.EPISODES_THIS_ITERATION: [2, 1, 0],
            metrics.ENV_STEPS_SAMPLED_LIFETIME: [1024, 2048, 3072],
        }
    )
    (summary,) = summarize([result], metrics.EPISODE_RETURN_MEAN)  # type: ignore[arg-type]
    assert (summary.episode_return_mean, summary.return_iteration) == (-12.0, 2)
    assert "OK: return -12.0 (iteration 2, best -12.0) | env steps 3,072" in summary.line()


def test_a_run_in_which_no_episode_ended_still_reads_n_a() -> None:
    result = _result(
        {
            metrics.TRAINING_ITERATION: [1, 2],
            metrics.EPISODE_RETURN_MEAN: [NAN, NAN],
            metrics.EPISODES_THIS_ITERATION: [0, 0],
        }
    )
    (summary,) = summarize([result], metrics.EPISODE_RETURN_MEAN)  # type: ignore[arg-type]
    assert summary.return_iteration is None
    assert "OK: return n/a (best n/a)" in summary.line()


def _grid(tmp_path: Path, status: str, *failures: str, done: bool = False) -> ResultGrid:
    """Tune's ResultGrid of one trial that failed with `failures` (Tune's own error.txt,
    a block per failure) and stands at `status`, as `Tuner.fit` builds it from its trials.
    The trial's folder is its storage folder too (a run's, on a local disk)."""
    trial = StagedTrial(
        tmp_path,
        0,
        max_failures=len(failures),
        # Ray's private StorageContext: how Tune tells a trial where its files are.
        storage=StorageContext(
            storage_path=str(tmp_path.parent),
            experiment_dir_name=tmp_path.name,
            trial_dir_name="abcde_00000",
        ),
    )
    for failure in failures:
        trial.handle_error(TuneError(failure))
    last = {**rl_result(3, 6.0, 384, 20.0), "done": done}
    trial.update_last_result(last)
    (Path(trial.path) / "result.json").write_text(json.dumps(last) + "\n")
    trial.set_status(status)
    # Given the trials, the analysis reads no experiment state file.
    return ResultGrid(ExperimentAnalysis(str(tmp_path / "state.json"), trials=[trial]))


def test_a_trial_restarted_after_a_failure_then_paused_is_interrupted(tmp_path: Path) -> None:
    """Tune's Result keeps the error of a failure the trial was restarted from, and gives
    one to every trial that is not TERMINATED: it read ERROR, and the run exited 1 without
    its --resume line where Ctrl-C or SIGTERM had paused it."""
    results = _grid(tmp_path, Trial.PAUSED, "KeyError: 'obs' (restarted from)")
    assert results[0].error is not None  # what the summary used to go by
    (summary,) = summarize(results, metrics.EPISODE_RETURN_MEAN)
    assert (summary.status, summary.error) == ("INTERRUPTED", None)
    assert was_interrupted(results)


def test_a_trial_that_ended_failed_is_an_error_named_by_its_last_failure(tmp_path: Path) -> None:
    results = _grid(tmp_path, Trial.ERROR, "KeyError: 'obs'", "ValueError: bad lr")
    (summary,) = summarize(results, metrics.EPISODE_RETURN_MEAN)
    assert (summary.status, summary.error) == ("ERROR", "ValueError: bad lr")
    assert not was_interrupted(results)


def test_a_trial_that_reached_its_stop_after_a_restart_is_ok(tmp_path: Path) -> None:
    results = _grid(tmp_path, Trial.TERMINATED, "KeyError: 'obs'", done=True)
    (summary,) = summarize(results, metrics.EPISODE_RETURN_MEAN)
    assert (summary.status, summary.error) == ("OK", None)


def test_summary_json_is_replaced_whole(tmp_path: Path) -> None:
    """Written beside and renamed into place: no reader sees half a file, and nothing but
    summary.json is left."""
    from rlsuite.launcher.summary import write_summary

    path = tmp_path / "summary.json"
    path.write_text('{"old": true}\n')
    write_summary(path, [], experiment="x")
    assert json.loads(path.read_text()) == {"experiment": "x", "trials": []}
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]
