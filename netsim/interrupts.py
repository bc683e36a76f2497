"""Interrupts during a run: SIGINT/SIGTERM as ``KeyboardInterrupt``, deferred while outputs are written.

A run's outputs must survive Ctrl-C (SIGINT) and a polite kill (SIGTERM, e.g.
from a batch scheduler): :func:`interrupt_signals` makes both raise
:class:`KeyboardInterrupt` in the main thread, so one code path (``except
BaseException``) flushes the sinks and writes ``summary.json``. Inside a
:func:`deferred` block (a sink writing a chunk, the summary being written) a
signal is remembered instead and raised when the outermost block ends, so a
file is never left half written by our own handler.

Left out: SIGKILL and power loss cannot be caught; against them every output
is written under a temporary name and renamed when whole
(:mod:`netsim.runfiles`). Outside the main thread (e.g. a Dask worker) no
handler can be installed and :func:`interrupt_signals` does nothing.
"""
from __future__ import annotations

import contextlib
import signal
import threading

#: Signals turned into ``KeyboardInterrupt`` while :func:`interrupt_signals` is active.
HANDLED_SIGNALS = ("SIGINT", "SIGTERM")

#: ``depth``: nesting of blocks that hold interrupts back; ``pending``: the signal held back.
STATE = _state = {"depth": 0, "pending": None, "active": 0}


def _handler(signum, frame):  # noqa: ARG001 - signal handler signature
    if _state["depth"]:
        _state["pending"] = signum
        return
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


@contextlib.contextmanager
def interrupt_signals():
    """SIGINT and SIGTERM raise ``KeyboardInterrupt`` inside the block; the old handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = [getattr(signal, n) for n in HANDLED_SIGNALS if hasattr(signal, n)]
    old = {s: signal.signal(s, _handler) for s in sigs}
    _state["active"] += 1
    try:
        yield
    finally:
        _state["active"] -= 1
        for s, h in old.items():
            signal.signal(s, h)


def raise_pending() -> None:
    """Raise the interrupt held back by a critical section that just ended (see :class:`netsim.records.TeeSink`)."""
    if not _state["depth"] and _state["pending"] is not None:
        signum, _state["pending"] = _state["pending"], None
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


@contextlib.contextmanager
def deferred(raise_pending: bool = True):
    """Hold back an interrupt from :func:`interrupt_signals` until the block ends (then raise it).

    Blocks nest; the interrupt is raised when the outermost one ends, and not
    if that block is already unwinding with an exception or ``raise_pending``
    is false (cleanup after a run already stopping).
    """
    _state["depth"] += 1
    ok = False
    try:
        yield
        ok = True
    finally:
        _state["depth"] -= 1
        if not _state["depth"] and _state["pending"] is not None:
            signum, _state["pending"] = _state["pending"], None
            if ok and raise_pending:
                raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")
