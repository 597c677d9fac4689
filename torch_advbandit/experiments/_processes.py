"""Worker-process plumbing of the sweep: SIGTERM as an interrupt, and workers that die with their driver."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While the sweep runs, SIGTERM (``kill``, ``timeout``, a batch scheduler) acts like Ctrl-C.

    Python's default SIGTERM ends the driver at once, and its worker processes would run on,
    orphaned, until their trials finish, with nobody left to record them. Raised as
    ``KeyboardInterrupt`` instead, it takes the interrupt path: the workers are terminated and the
    records already written stay. A handler the caller installed is left alone, and so is any
    thread but the main one (signals are delivered there only).
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) not in (
        signal.SIG_DFL,
        None,
    ):
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this process when the driver ``parent`` dies, whatever killed it.

    On Linux the kernel delivers ``SIGKILL`` on the parent's death (``prctl(PR_SET_PDEATHSIG)``), so
    even a ``kill -9`` of the driver leaves no worker running; a parent that died before the call
    is caught by comparing ``getppid()``. Elsewhere this does nothing (SIGTERM and Ctrl-C still stop
    the workers through the interrupt path).
    """
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # pragma: no cover - no prctl in this libc
            return
        if os.getppid() != parent:
            os._exit(1)
