"""Error types and notes: what netsim tells a user on stderr. Every user-facing problem is a :class:`NetsimError`.

The CLI catches :class:`NetsimError`, prints its one-line message to stderr
and exits with status 2 (:data:`EXIT_INPUT`). A message names the file (and
line or field), the bad value, and what would be accepted. A :func:`note` is
one ``netsim: note:`` line about input read as a tool reads it (HPCC's
declared record counts); while the CLI runs a command the notes are held and
printed only if it succeeds. Left out: warnings of Python's ``warnings`` module.
"""
from __future__ import annotations

import sys

EXIT_INPUT = 2


class NetsimError(Exception):
    """Base of every error netsim reports to a user (exit status 2)."""


class InputError(NetsimError):
    """Bad input: a file, a field, a value and what would be accepted.

    >>> str(InputError("bad unit", source="flows.csv", where="line 3, field size_bytes", value="10Gbsp"))
    "flows.csv: line 3, field size_bytes: bad unit (got '10Gbsp')"
    """

    def __init__(self, message: str, *, source: str | None = None, where: str | None = None,
                 value=None, accepted: str | None = None):
        self.source, self.where, self.value, self.accepted = source, where, value, accepted
        parts = [p for p in (source, where) if p]
        text = ": ".join(parts + [message])
        if value is not None:
            text += f" (got {value!r})"
        if accepted:
            text += f"; expected {accepted}"
        super().__init__(text)


class TopologyError(InputError):
    """The topology graph breaks the documented contract."""


class WorkloadError(InputError):
    """A workload file or object is invalid."""


class RoutingError(NetsimError):
    """No route exists (e.g. unreachable destination or a failed link)."""


class SimulationError(NetsimError):
    """An invariant of the simulation was violated (a bug, or PFC drop)."""


#: notes already printed (each is printed once per process)
_notes_said: set = set()
#: while the CLI runs a command, notes wait here and are printed only if it succeeds (an error stays one line)
_held: list | None = None


def note(message: str) -> None:
    """Print ``netsim: note: MESSAGE`` on stderr, once per message and process (held while :func:`hold_notes`)."""
    if message in _notes_said:
        return
    if _held is not None:
        if message not in _held:
            _held.append(message)
        return
    _notes_said.add(message)
    print(f"netsim: note: {message}", file=sys.stderr)


def hold_notes() -> None:
    """Hold notes until :func:`release_notes` (the CLI: a failing command prints its error line only)."""
    global _held
    _held = []


def release_notes(show: bool) -> None:
    """Print the held notes (``show``) or drop them; stop holding."""
    global _held
    held, _held = _held or [], None
    for message in held if show else ():
        note(message)
