"""SIGTERM and Ctrl-C end a run after a checkpoint: no finished iteration is lost.

A cloud's preemption notice, a Kubernetes pod deletion or a scheduler's time limit sends
SIGTERM and kills the process some 30 s later. Ray's own handler aborts the driver (a C
stack dump, exit 134), and Tune's Ctrl-C handling stops trials without saving them, so a
resume went back to the last periodic checkpoint and repeated the iterations since. Here
the first SIGTERM or Ctrl-C asks every trial to pause at its next result (Tune checkpoints
a trial it pauses, and resumes a paused trial from that checkpoint), starts no new trial,
and ends the run as Tune's own interrupt does once nothing runs, or after `GRACE_S`
whatever is left. A second Ctrl-C stops at once (Tune's interrupt, from the last
checkpoints; once every trial paused, it lets Tune write their state), a further one
raises KeyboardInterrupt; a second SIGTERM kills the process. Tune's SIGINT handler is off for this (`TUNE_DISABLE_SIGINT_HANDLER`);
its interrupt is reached through SIGUSR1, which Tune always handles.

A SIGTERM sent to the whole process group (`timeout`, `kill -- -PGID`, a batch
scheduler's job step) reaches the embedded Ray's own processes too: Ray blocks SIGINT in
them, not SIGTERM. With its GCS gone, the driver would wait a minute for it and die with
a C++ error (exit 1, nothing printed), so the run ends at once instead, with exit 143 and
the `--resume` line: the trials resume from their last checkpoints.
"""

from __future__ import annotations

import _thread
import os
import signal
import threading
import time
from types import FrameType
from typing import Any

from ray.tune import Callback
from ray.tune.experiment import Trial
from ray.tune.schedulers import FIFOScheduler, TrialScheduler

# Seconds from SIGTERM to Tune's interrupt: a trial whose next result takes longer is
# stopped without a new checkpoint (it resumes from its last one), well inside the
# ~30 s that clouds give between their notice and the kill.
GRACE_S = 20.0
EXIT_TERMINATED = 143  # the shell's code for a process ended by SIGTERM


class Shutdown:
    """The run's stop state: whether a SIGTERM or Ctrl-C came, and the step that ends
    the run."""

    def __init__(self) -> None:
        self.requested = False
        """A stop was asked: trials pause at their next result."""
        self.terminated = False
        """By SIGTERM (exit 143), not Ctrl-C (exit 130)."""
        self._interrupted = False
        self._stop_now = False
        """The user's Ctrl-C asked to stop at once: the next one cuts Tune's stop short."""
        self._timer: threading.Timer | None = None
        self._run_ended = threading.Event()
        self._lock = threading.RLock()  # a signal handler may run inside uninstall
        self._previous: dict[int, Any] = {}
        self._previous_env: str | None = None
        self.resume_hint = "rlsuite.launch(..., resume=True)"
        """How to continue the run, for the line printed where it cannot end as usual."""

    def install(self) -> None:
        """Handle SIGTERM and Ctrl-C from now on, until `uninstall`. Only from the main
        thread, where Python runs signal handlers (Tune leaves signals alone elsewhere
        too). Through Ray Client Tune's loop runs on the cluster, where this process can
        ask for neither a pause nor Tune's interrupt: Ctrl-C stays Tune's there."""
        self.requested = self.terminated = self._interrupted = self._stop_now = False
        self._run_ended.clear()
        if threading.current_thread() is not threading.main_thread():
            return
        handlers: dict[int, Any] = {signal.SIGTERM: self._on_sigterm}
        if not _through_ray_client():
            handlers[signal.SIGINT] = self._on_sigint
            # Tune's interrupt until fit() installs it: an interrupt before then ends the
            # run before its trials start.
            handlers[signal.SIGUSR1] = signal.default_int_handler
        self._previous = {signum: signal.signal(signum, h) for signum, h in handlers.items()}
        if signal.SIGINT in handlers:
            self._previous_env = os.environ.get(_TUNE_SIGINT)
            os.environ[_TUNE_SIGINT] = "1"  # read when fit() starts

    def uninstall(self) -> None:
        """The handlers from before `install` again; the run is over, so Ray's processes
        may end now (its shutdown), which is no sign of a signal sent to them (`terminated`
        stays for the caller to read)."""
        with self._lock:
            self._run_ended.set()
            if self._timer is not None:
                self._timer.cancel()
            if signal.SIGINT in self._previous:
                if self._previous_env is None:
                    os.environ.pop(_TUNE_SIGINT, None)
                else:
                    os.environ[_TUNE_SIGINT] = self._previous_env
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)
            self._previous = {}
            self.requested = self._interrupted = self._stop_now = False

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self._stop_now:  # asked to stop at once already: cut Tune's stop short
            raise KeyboardInterrupt
        if not self.requested:
            self._request()
            _announce(
                f"Ctrl-C: each trial stops at its next result with a checkpoint (within "
                f"{GRACE_S:.0f} s); Ctrl-C again to stop now, from their last checkpoints"
            )
            return
        self._stop_now = True
        if self._interrupted:  # every trial paused already: Tune is writing their state
            _announce("the trials are paused at their checkpoints and the run is ending")
            return
        self.interrupt()

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        if self.terminated:  # the second one: stop now, as the sender asked twice
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        self.terminated = True
        # Watched beside the run, not in this handler: on a busy machine Ray's processes
        # took over a second to end, and the handler holds up Tune's loop meanwhile.
        threading.Thread(target=self._end_if_own_ray_stopped, daemon=True).start()
        if not self.requested:
            self._request()

    def _request(self) -> None:
        self.requested = True
        self._timer = threading.Timer(GRACE_S, self.interrupt)
        self._timer.daemon = True
        self._timer.start()

    def _end_if_own_ray_stopped(self) -> None:
        if _own_ray_stopped(self._run_ended):
            self._end_without_ray()

    def _end_without_ray(self) -> None:
        from rlsuite.launcher.console import terminal
        from rlsuite.launcher.live import stop_live_views

        stop_live_views()
        print(
            "stopped by SIGTERM, which reached this run's own Ray too (a signal to the whole "
            "process group): its trials stopped without a new checkpoint; continue from their "
            f"last ones with  {self.resume_hint}",
            file=terminal(err=True),
            flush=True,
        )
        terminal().flush()
        os._exit(EXIT_TERMINATED)  # nothing left to end cleanly: Ray's processes are gone

    def interrupt(self) -> None:
        """Tune's interrupt: it stops its trials and writes its state. Not once the run
        ended: SIGUSR1 would kill the process with the handlers from before restored."""
        with self._lock:
            if self._interrupted or self._run_ended.is_set():
                return
            self._interrupted = True
            if self._timer is not None:
                self._timer.cancel()
            if signal.getsignal(signal.SIGUSR1) in (signal.SIG_DFL, signal.SIG_IGN, None):
                # Tune's loop runs elsewhere (Ray Client): KeyboardInterrupt in the main
                # thread, as Ctrl-C gives there, rather than SIGUSR1's default (death).
                _thread.interrupt_main()
                return
            os.kill(os.getpid(), signal.SIGUSR1)


_TUNE_SIGINT = "TUNE_DISABLE_SIGINT_HANDLER"


def _through_ray_client() -> bool:
    try:
        from ray.util.client import ray as client

        return bool(client.is_connected())
    except Exception:  # no Ray Client in this Ray: not through it
        return False


def _announce(line: str) -> None:
    """Print from a thread of its own, not the signal handler: the live view takes locks
    that the interrupted main thread may hold."""
    from rlsuite.launcher.live import announce

    threading.Thread(target=announce, args=(line,), daemon=True).start()


def _own_ray_stopped(run_ended: threading.Event, wait_s: float = 5.0) -> bool:
    """Whether a process of the Ray this process started ended with the signal (within
    `wait_s`: they get it at the same moment). Measured with a group SIGTERM on Ray 2.60:
    the dashboard and the log monitor end first, the raylet ~10 s later (its agent gone),
    the GCS only with the driver, which waits a minute for it. A joined cluster's
    processes are not ours; once the run ended, Ray's shutdown ends them."""
    import ray._private.worker as ray_worker

    node = getattr(ray_worker, "_global_node", None)
    if node is None or not node.head:
        return False
    processes = [info.process for infos in node.all_processes.values() for info in infos]
    deadline = time.monotonic() + wait_s
    while processes and time.monotonic() < deadline and not run_ended.is_set():
        if any(process.poll() is not None for process in processes):
            return not run_ended.is_set()
        time.sleep(0.05)
    return False


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
    """Tune callback: once a stop was asked, end the run as soon as no trial runs."""

    def on_step_end(self, iteration: int, trials: list[Trial], **info: Any) -> None:
        if SHUTDOWN.requested and not any(t.status == Trial.RUNNING for t in trials):
            SHUTDOWN.interrupt()


def pausing(scheduler: TrialScheduler | None) -> TrialScheduler:
    """`scheduler` (Tune's FIFO when None) that pauses its trials once a stop was asked."""
    scheduler = scheduler or FIFOScheduler()
    base = type(scheduler)
    scheduler.__class__ = type(f"Pausing{base.__name__}", (_PausesOnShutdown, base), {})
    return scheduler
