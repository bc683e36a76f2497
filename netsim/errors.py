"""Error types. Every user-facing problem is a :class:`NetsimError`.

The CLI catches :class:`NetsimError`, prints its one-line message to stderr
and exits with status 2 (:data:`EXIT_INPUT`). A message names the file (and
line or field), the bad value, and what would be accepted.
"""
from __future__ import annotations

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
