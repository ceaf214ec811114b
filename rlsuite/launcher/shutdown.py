"""SIGTERM handled as Ctrl-C, after a checkpoint: what a preempted machine sends first.

A cloud's preemption notice, a Kubernetes pod deletion or a scheduler's time limit sends
SIGTERM and kills the process some 30 s later. Ray's own handler aborts the driver (a C
stack dump, exit 134), and Tune's Ctrl-C handling stops trials without saving them, so a
resume went back to the last periodic checkpoint. Here the first SIGTERM asks every
trial to pause at its next result (Tune checkpoints a trial it pauses, and resumes a
paused trial from that checkpoint), starts no new trial, and ends the run as Ctrl-C does
once nothing runs, or after `GRACE_S` whatever is left. A second SIGTERM stops at once.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any

from ray.tune import Callback
from ray.tune.experiment import Trial
from ray.tune.schedulers import FIFOScheduler, TrialScheduler

# Seconds from SIGTERM to Tune's interrupt: a trial whose next result takes longer is
# stopped without a new checkpoint (it resumes from its last one), well inside the
# ~30 s that clouds give between their notice and the kill.
GRACE_S = 20.0


class Shutdown:
    """The run's SIGTERM state: whether one came, and the step that ends the run."""

    def __init__(self) -> None:
        self.requested = False
        self._interrupted = False
        self._timer: threading.Timer | None = None

    def install(self) -> Any:
        """Handle SIGTERM from now on (main thread only); returns the previous handler."""
        return signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:  # the second one: stop now, as the sender asked twice
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        self.requested = True
        self._timer = threading.Timer(GRACE_S, self.interrupt)
        self._timer.daemon = True
        self._timer.start()

    def interrupt(self) -> None:
        """End the run as Ctrl-C does: Tune stops its trials and writes its state."""
        if not self._interrupted:
            self._interrupted = True
            if self._timer is not None:
                self._timer.cancel()
            os.kill(os.getpid(), signal.SIGINT)


# One per process. The scheduler and callback below read it rather than hold it: Tune
# pickles both into the run's tuner.pkl, and `--resume` unpickles them in a new process
# whose handler sets this one.
SHUTDOWN = Shutdown()


class _PausesOnShutdown:
    """Mixed into the run's Tune scheduler (FIFO, ASHA, PBT, PB2)."""

    def on_trial_result(self, tune_controller: Any, trial: Trial, result: dict) -> str:
        decision = super().on_trial_result(tune_controller, trial, result)  # type: ignore[misc]
        if SHUTDOWN.requested and decision == TrialScheduler.CONTINUE:
            return TrialScheduler.PAUSE
        return str(decision)

    def choose_trial_to_run(self, tune_controller: Any, **kwargs: Any) -> Trial | None:
        # kwargs: schedulers extend the signature (HyperBandForBOHB calls itself again
        # with allow_recurse=False once a bracket is processed).
        if SHUTDOWN.requested:
            return None
        return super().choose_trial_to_run(tune_controller, **kwargs)  # type: ignore[misc]


class EndsRunOnceAllPaused(Callback):
    """Tune callback: after a SIGTERM, end the run as soon as no trial runs any more."""

    def on_step_end(self, iteration: int, trials: list[Trial], **info: Any) -> None:
        if SHUTDOWN.requested and not any(t.status == Trial.RUNNING for t in trials):
            SHUTDOWN.interrupt()


def pausing(scheduler: TrialScheduler | None) -> TrialScheduler:
    """`scheduler` (Tune's FIFO when None) that pauses its trials once SIGTERM came."""
    scheduler = scheduler or FIFOScheduler()
    base = type(scheduler)
    scheduler.__class__ = type(f"Pausing{base.__name__}", (_PausesOnShutdown, base), {})
    return scheduler
