"""`rlsuite.serve`'s stop signals (rlsuite/serving/stop_signals.py): after the first SIGTERM
or Ctrl-C later ones are ignored until the process ends, also while and after Ray shuts
down, which otherwise resets SIGTERM to the default in C (a second signal then ended the
server with exit 143). The whole server: tests/test_serve.py's CI-run server test."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from rlsuite.serving.stop_signals import StopSignals
from tests.helpers import ROOT

# The server's order: keep, ray.init, arm, (a signal), hold, ray.shutdown, release.
SHUTDOWN_THEN_SIGTERM = textwrap.dedent(
    """
    import os, signal, time
    import ray
    from rlsuite.serving.stop_signals import StopSignals

    stop_signals = StopSignals()
    stop_signals.keep_through_shutdown()
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    stop_signals.arm()
    stop_signals.hold()
    ray.shutdown()
    os.kill(os.getpid(), signal.SIGTERM)  # before release: only hold's SIG_IGN stands
    time.sleep(0.5)
    print("still running after SIGTERM")
    """
)


def test_sigterm_after_ray_shutdown_is_still_ignored() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SHUTDOWN_THEN_SIGTERM],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert "still running after SIGTERM" in done.stdout


@pytest.fixture
def signals() -> Iterator[StopSignals]:
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield StopSignals()
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def test_first_signal_interrupts_once_and_stays_ignored(signals: StopSignals) -> None:
    signals.arm()
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGTERM)
    signal.raise_signal(signal.SIGTERM)  # ignored: no second KeyboardInterrupt
    signal.raise_signal(signal.SIGINT)
    signals.release()
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_release_without_a_signal_gives_the_callers_handlers_back(signals: StopSignals) -> None:
    signals.arm()
    signals.hold()
    signals.release()
    assert signal.getsignal(signal.SIGTERM) == signals.original[signal.SIGTERM]
    assert signal.getsignal(signal.SIGINT) == signals.original[signal.SIGINT]
