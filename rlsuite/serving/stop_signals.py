"""SIGTERM and Ctrl-C stop `rlsuite.serve` once, and nothing cuts its clean-up short.

The first signal raises KeyboardInterrupt in the main thread and ignores later ones at
once (a wrapper such as `timeout` forwards a SIGTERM it also got, so the server gets it
twice). Ray's driver installs absl's failure signal handler (C++ stack traces on a crash),
SIGTERM among its signals, and `ray.shutdown()` uninstalls it by setting SIGTERM back to the
default in C, where Python's table still says ignored: a second SIGTERM in the second the
shutdown takes ended the process (exit 143, 3 of 3 tries). `keep_through_shutdown` leaves
that handler out of this process (Ray's own switch, RAY_DISABLE_FAILURE_SIGNAL_HANDLER, read
when the driver connects); the env var itself would reach the replicas too, which keep it.
"""

from __future__ import annotations

import signal
from types import FrameType

import ray._private.ray_constants as ray_constants

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignals:
    """The server's handling of SIGTERM and SIGINT, from `arm` to `release`."""

    def __init__(self) -> None:
        self.original = {signum: signal.getsignal(signum) for signum in _SIGNALS}
        self.received = False

    @staticmethod
    def keep_through_shutdown() -> None:
        """Before ray.init: this driver without absl's failure handler, so ray.shutdown has
        no SIGTERM disposition to reset. Ray reads the constant at connect time; a Ray that
        stops reading it brings the reset back, which tests/test_serve_signals.py shows."""
        ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = True

    def arm(self) -> None:
        """After ray.init, which installs its own SIGTERM handler (exit without clean-up).
        SIGINT too, where it was inherited ignored (a shell script's background job), as
        Tune's fit() does for rlsuite.run: seen as a server a test harness could not stop."""
        for signum in _SIGNALS:
            signal.signal(signum, self._interrupt)

    def hold(self) -> None:
        """Ignore both for the clean-up."""
        for signum in _SIGNALS:
            signal.signal(signum, signal.SIG_IGN)

    def release(self) -> None:
        """After ray.shutdown: stopped by a signal, the process is ending and later ones
        stay ignored; else (a failed start, an in-process caller) the caller's come back.
        Set again in any case: a Ray that resets SIGTERM in C again is undone here."""
        for signum, handler in self.original.items():
            signal.signal(signum, signal.SIG_IGN if self.received else handler)

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        self.received = True
        self.hold()  # from the first signal on: none cuts the clean-up short
        raise KeyboardInterrupt


__all__ = ["StopSignals"]
