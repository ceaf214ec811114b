"""`rlsuite.launch(...)`: the Python entry point under `python -m rlsuite.run`.

For notebooks and scripts: the same checks as the command line, raising
`rlsuite.UsageError` where the command line prints one line and exits 2.

    import rlsuite
    run = rlsuite.launch("experiments/ppo_cartpole.py", smoke=True, seeds=2)
    run.summaries[0].episode_return_mean
    run.results.get_best_result(rlsuite.metrics.EPISODE_RETURN_MEAN, "max").checkpoint
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ray.tune import ResultGrid

from rlsuite.errors import UsageError
from rlsuite.experiment import Experiment
from rlsuite.launcher import console, ray_session, run_dirs, tuner
from rlsuite.launcher.prepare import Prepared, load_and_prepare
from rlsuite.launcher.shutdown import SHUTDOWN
from rlsuite.launcher.summary import (
    TrialSummary,
    best_value,
    summarize,
    was_interrupted,
    write_summary,
)
from rlsuite.options import RunOptions


@dataclass(frozen=True)
class RunResult:
    """What one run left: Tune's results, a summary per trial, where the files are."""

    results: ResultGrid
    summaries: list[TrialSummary]
    experiment_dir: Path
    interrupted: bool
    """A trial neither finished nor failed (Ctrl-C, SIGTERM): continue with `resume=True`."""
    terminated: bool
    """SIGTERM ended the run (its trials paused at a checkpoint first, where they could)."""
    failed: bool
    """A trial failed; its summary's `error` says why."""
    passed: bool | None
    """With `as_test`: whether a trial reached the stop return; None otherwise."""
    as_test_line: str | None = None


def launch(
    experiment: Experiment | str | Path,
    *,
    overrides: dict[str, Any] | list[str] | None = None,
    name: str | None = None,
    **options: Any,
) -> RunResult:
    """Run an experiment (an `Experiment` or the path of an experiment file) through Tune.

    `overrides` are `--set` edits: `{"training.lr": 1e-4}` or `["training.lr=1e-4"]`; a
    Python object no literal spells (a `DefaultModelConfig`, an env class) is applied as
    itself. Other keyword arguments are `RunOptions` fields, named as the command line's
    flags and checked as they are: `smoke`, `seed`, `seeds`, `stops`
    (`["training_iteration=5"]`), `num_samples`, `storage_path`, `address`,
    `num_env_runners`, `resume`, `as_test`, ...
    """
    run_options = RunOptions.from_launch(overrides, name, options)
    with _one_run_at_a_time():  # loading diverts fd 1 and 2 too (console.held_output)
        return run_prepared(load_and_prepare(experiment, run_options))


# Held by the thread whose run is going (re-entered by launch's own run_prepared). A run
# owns process-wide state: fd 1 and 2 (console), the signal handlers and SHUTDOWN, and the
# Ray it starts, which a run from another thread would shut down under it at its end.
_RUN_GOING = threading.RLock()


@contextlib.contextmanager
def _one_run_at_a_time() -> Iterator[None]:
    if not _RUN_GOING.acquire(blocking=False):
        raise UsageError(
            "another rlsuite.launch is still running in this process (from another thread); "
            "wait for it to return, or start this run in a process of its own "
            "(python -m rlsuite.run, or a multiprocessing.Process)"
        )
    try:
        yield
    finally:
        _RUN_GOING.release()


def run_prepared(prepared: Prepared, on_start: Callable[[], object] = lambda: None) -> RunResult:
    """Run a prepared experiment and write its `summary.json`; `on_start()` once its
    results folder is claimed, before Ray starts."""
    with _one_run_at_a_time():
        return _run(prepared, on_start)


def _run(prepared: Prepared, on_start: Callable[[], object]) -> RunResult:
    experiment, launch_, threshold = prepared
    with run_dirs.claimed(launch_.experiment_dir, launch_.overwrite):
        on_start()
        if launch_.verbose:
            results = tuner.run(experiment, launch_)
        else:
            with console.ray_output_to(launch_.logs_dir):
                try:
                    results = tuner.run(experiment, launch_)
                finally:
                    console.copy_ray_logs(launch_.logs_dir)
        summaries = summarize(results, experiment.metric, experiment.mode)
        write_summary(
            launch_.experiment_dir / "summary.json",
            summaries,
            experiment=launch_.name,
            metric=experiment.metric,
            mode=experiment.mode,
            experiment_file=str(launch_.experiment_file) if launch_.experiment_file else None,
        )
        if threading.current_thread() is not threading.main_thread():
            # Ray 2.60 started from another thread left its GCS client spinning for 60 s at
            # the process's exit ("Failed to connect to GCS"), with plain Tune too: the Ray
            # this run started ends with it. (From the main thread it stays up, as before.)
            ray_session.shutdown_if_started_in_this_thread()
    passed, line = (None, None) if threshold is None else _as_test(results, *threshold)
    return RunResult(
        results=results,
        summaries=summaries,
        experiment_dir=launch_.experiment_dir,
        interrupted=was_interrupted(results),
        terminated=SHUTDOWN.terminated,
        failed=any(s.status == "ERROR" for s in summaries),
        passed=passed,
        as_test_line=line,
    )


def _as_test(results: ResultGrid, metric: str, threshold: float) -> tuple[bool, str]:
    values = [best_value(results[i], metric) for i in range(len(results))]
    best = max((v for v in values if v is not None), default=None)
    if best is not None and best >= threshold:
        return True, f"as-test: passed, {metric} reached {best:.1f} >= {threshold:g}"
    return False, f"as-test: failed, {metric} reached {best} < {threshold:g}"
