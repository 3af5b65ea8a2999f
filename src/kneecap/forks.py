"""Forking a helper process without losing the parent's SIGTERM or SIGINT.

``os.fork`` runs Python's at-fork callbacks (logging's lock release among them). A signal whose
Python handler runs inside one of them raises there, the interpreter prints "Exception ignored"
and goes on: a ``kneecap ingest`` terminated at that moment finished its work and exited 0. Held
back with :func:`signal.pthread_sigmask` while the process forks, the signal stays pending and is
handled right after, in ordinary code. The child inherits the held mask and lets the signals
through again (:func:`release_held_signals`) once it has set its own handlers.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

#: The signals a fork holds back
HELD_OVER_FORK = frozenset({signal.SIGTERM, signal.SIGINT})


@contextlib.contextmanager
def signals_held_over_fork() -> Iterator[None]:
    """SIGTERM and SIGINT pending, not handled, while the block runs (the fork); delivered after it."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_OVER_FORK)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def release_held_signals() -> None:
    """In a forked child, after it set its own handlers: SIGTERM and SIGINT delivered again."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_OVER_FORK)
