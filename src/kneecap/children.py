"""Forked helper processes that do not outlive the process that forked them.

``kneecap ingest`` forks two helpers: the SMF framing process (:mod:`kneecap.smf.reader`) and the
process hashing its inputs (:class:`kneecap.ingest.manifest.HashAhead`). A helper left running
after its parent was killed would read a dump nobody waits for (issue 35: an orphaned framing
process held the store's lock for 20 minutes), so each ties its life to its parent's here.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["die_with_parent"]

#: prctl(2) option: the signal the calling process gets when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """In a forked child: be killed when ``parent`` dies, and end now if it already has.

    On Linux the kernel sends SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``). The
    parent may have died before the call, so its pid is checked after it. Elsewhere the caller
    must notice the parent's end itself (a closed pipe).
    """
    if sys.platform.startswith("linux"):
        import ctypes  # here: only a forked helper needs it

        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl in this C library: the pipe still ends the child
    if os.getppid() != parent:
        os._exit(0)
