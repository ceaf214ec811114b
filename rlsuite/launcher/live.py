"""The live view of a run on a terminal: a bar per trial toward its nearest stop criterion
with elapsed time and ETA, for a sweep one table of trials, redrawn in place by `rich`;
events (a PBT exploit, a stop by the scheduler, a failure, a restart) print above it, one
line each.

`progress_callback` picks what prints while trials run: this view when the suite's output
(`rlsuite.launcher.console.terminal()`) is a terminal, `ProgressPrinter`'s line per result
otherwise (CI, pipes, `| tee`), or nothing (`--quiet`). The view stops at the experiment's
end, when `tuner.run` returns or raises (`stop_live_views`), at exit and on SIGTERM,
leaving the terminal usable and the summary printed after it plain.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from ray.tune import Callback
from ray.tune.experiment import Trial
from rich.console import Console
from rich.live import Live
from rich.text import Text

from rlsuite.launcher.console import terminal
from rlsuite.launcher.live_board import Board, value
from rlsuite.launcher.progress import ProgressPrinter, console_result, error_line, flat_result
from rlsuite.launcher.stop_progress import stop_progress

REFRESH_PER_SECOND = 4  # redraws that move the elapsed time and ETA; each renders the view
PBT_LOG = "pbt_global.txt"  # Tune PBT's exploit log in the experiment folder
_DRAWING: set[LiveProgress] = set()


def progress_callback(
    mode: str, stop: Mapping[str, float], metric: str, metric_mode: str = "max"
) -> Callback:
    """What prints while trials run: "auto" the live view on a terminal and a line per
    result otherwise, "lines" always a line per result, "quiet" nothing (the summary still
    prints). `stop` and `metric` are the experiment's; `metric_mode` says whether the best
    value of `metric` is its highest ("max") or its lowest ("min")."""
    if mode == "quiet":
        return Callback()
    if mode == "lines":
        return ProgressPrinter(stop, metric)
    if mode == "auto":
        return LiveProgress(stop, metric, metric_mode)
    raise ValueError(f"progress mode {mode!r}: choose auto, lines or quiet")


def stop_live_views() -> None:
    """Stop every live view still drawing. Tune tells its callbacks that the experiment
    ended unless a Ctrl-C while it stops or an exception cut it short: call this after it."""
    for view in list(_DRAWING):
        view.stop()


def announce(line: str) -> None:
    """A line above every live view still drawing, or on the terminal when none is."""
    views = list(_DRAWING)
    if not views:
        print(line, file=terminal(err=True), flush=True)
    for view in views:
        view._event(line)


class LiveProgress(ProgressPrinter):
    """The live view on a terminal, `ProgressPrinter`'s lines otherwise.

    Tune pickles its callbacks with the run (`tuner.pkl`) and uses them again on
    `--resume`, so the terminal is looked at when the run starts, not when this is built."""

    def __init__(self, stop: Mapping[str, float], metric: str, metric_mode: str = "max"):
        super().__init__(stop, metric)
        self._metric_mode = metric_mode
        self._board: Board | None = None
        """The trials as the live view shows them; None in the line-per-result mode."""
        self._live: Live | None = None
        self._pbt_log: PbtLog | None = None
        self._catches_sigterm = False

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_board": None, "_live": None, "_pbt_log": None}

    def setup(
        self,
        stop: Any = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: Any,
    ) -> None:
        console = Console(file=terminal())
        if console.file.isatty() and not console.is_dumb_terminal:  # TERM=dumb cannot redraw
            self.start(console, total_num_samples or 0)

    def start(self, console: Console, num_trials: int = 0) -> None:
        """Show the live view on `console` (`setup` does on a terminal)."""
        self._board = Board(dict(self._stop), self._metric, self._metric_mode, num_trials)
        # What Python code prints to sys.stdout and sys.stderr goes above the view, unless
        # the launcher sends it to the run's driver.log (`console.ray_output_to`).
        redirect = console.file is sys.stdout
        self._live = Live(
            console=console,
            get_renderable=self._board.render,
            refresh_per_second=REFRESH_PER_SECOND,
            redirect_stdout=redirect,
            redirect_stderr=redirect,
        )
        self._live.start()
        _DRAWING.add(self)
        atexit.register(self.stop)
        self._catch_sigterm()

    def stop(self) -> None:
        """Stop redrawing and leave the last view on screen; safe to call twice."""
        live, self._live = self._live, None
        if live is None:
            return
        _DRAWING.discard(self)
        atexit.unregister(self.stop)
        self._release_sigterm()
        with contextlib.suppress(OSError, ValueError):  # the terminal went away
            live.stop()

    def on_experiment_end(self, trials: list[Trial], **info: Any) -> None:
        self.stop()

    def on_trial_start(
        self, iteration: int, trials: list[Trial], trial: Trial, **info: Any
    ) -> None:
        if self._board is None:
            return
        for known in trials:  # pending ones too: a sweep's table lists every trial
            self._board.add(known)
        self._board.add(trial, starting=True)
        if self._pbt_log is None:
            self._pbt_log = PbtLog(Path(trial.local_experiment_path) / PBT_LOG)
            for exploit in self._pbt_log.read():  # logged before the view started: count only
                self._board.count_exploit(exploit.trial_tag)

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: dict, **info: Any
    ) -> None:
        board = self._board
        if board is None:
            super().on_trial_result(iteration, trials, trial, result, **info)
            return
        flat = console_result(result)  # the board shows what the lines show
        board.update(trial, flat)
        # Tune checks the stop criteria before it asks the scheduler, so `done` with no
        # criterion met is the scheduler's decision (ASHA).
        if result.get("done") and not any(
            p.value is not None and p.value >= p.target for p in stop_progress(self._stop, flat)
        ):
            self._event(f"[{trial.trial_id}] stopped by the scheduler at {board.where(trial)}")
        for exploit in self._pbt_log.read() if self._pbt_log else []:
            board.count_exploit(exploit.trial_tag)
            self._event(self._exploit_line(board, exploit))

    def on_trial_error(
        self, iteration: int, trials: list[Trial], trial: Trial, **info: Any
    ) -> None:
        if self._board is None:
            super().on_trial_error(iteration, trials, trial, **info)
            return
        self._event(f"[{trial.trial_id}] failed: {error_line(trial)}")

    def on_trial_recover(
        self, iteration: int, trials: list[Trial], trial: Trial, **info: Any
    ) -> None:
        if self._board is None:
            return
        limit = "" if trial.max_failures < 0 else f" of {trial.max_failures}"
        self._event(
            f"[{trial.trial_id}] failed, restart {trial.num_failures}{limit} from its last"
            f" checkpoint: {error_line(trial)}"
        )

    @staticmethod
    def _exploit_line(board: Board, exploit: Exploit) -> str:
        target, source = board.trial_id(exploit.trial_tag), board.trial_id(exploit.source_tag)
        changes = ", ".join(
            f"{key} {value(before)} -> {value(after)}"
            for key, (before, after) in exploit.changes.items()
        )
        return (
            f"[{target}] PBT exploit {source} at iteration {exploit.source_iteration}"
            f" ({board.metric_label} {value(board.metric_of(source))}"
            f" vs {value(board.metric_of(target))}); explore {changes or 'changed no value'}"
        )

    def _event(self, line: str) -> None:
        """One line above the live view (a plain line once the view has stopped)."""
        if self._live is None:
            print(line, file=terminal(), flush=True)
            return
        self._live.console.print(Text(line), soft_wrap=True, highlight=False)

    def _catch_sigterm(self) -> None:
        """Stop the view on SIGTERM, then die of it as before: with no handler the
        process ends at once, skipping atexit, and leaves the cursor hidden. A handler
        already installed (the suite's, which pauses the trials) stays: Tune then ends the run."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, self._on_sigterm)
            self._catches_sigterm = True

    def _release_sigterm(self) -> None:
        if self._catches_sigterm and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self._catches_sigterm = False

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self.stop()
        os.kill(os.getpid(), signal.SIGTERM)


@dataclass(frozen=True)
class Exploit:
    """One line of Tune PBT's exploit log: the trial tagged `trial_tag` copied the
    checkpoint of `source_tag` at its `source_iteration` and perturbed its config.
    (`rlsuite.reporting.runs.pbt_lineage` reads the same file after the run.)"""

    trial_tag: str
    source_tag: str
    source_iteration: int
    changes: dict[str, tuple[Any, Any]]
    """Config values the explore step changed: key -> (source's value, new value)."""


class PbtLog:
    """The exploits Tune's PBT appended to its log (`pbt_global.txt`) since the last read."""

    def __init__(self, path: Path):
        self.path = path
        self._offset = 0
        self._partial = b""

    def read(self) -> list[Exploit]:
        try:
            with self.path.open("rb") as log:
                log.seek(self._offset)
                data = log.read()
        except OSError:  # not written yet: no exploit so far, or not a PBT run
            return []
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        return [e for e in map(_exploit, lines) if e is not None]


def _exploit(line: bytes) -> Exploit | None:
    """[trial tag, source tag, iteration, source iteration, source config, new config]."""
    try:
        trial, source, _, source_iteration, source_config, new_config = json.loads(line)[:6]
        before, after = flat_result(source_config), flat_result(new_config)
        changes = {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v}
        return Exploit(str(trial), str(source), int(source_iteration), changes)
    except (json.JSONDecodeError, TypeError, ValueError, AttributeError):
        return None
