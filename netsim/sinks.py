"""The sink protocol: what a backend (or the runtime) writes rows and records to.

A sink takes rows one at a time (:meth:`Sink.add`) or the rows of one instant
together (:meth:`Sink.add_many`), may buffer them until :meth:`Sink.flush`,
and is finished by :meth:`Sink.close`. :class:`Sink` is the base every shipped
sink derives from: it states the whole protocol with defaults (``add_many``
adds one by one, ``flush`` has nothing buffered, ``close`` flushes), so a
backend calls these methods without probing for them.  ``path`` is the file a
sink writes (``None`` for one kept in memory), ``count`` the rows it received.
Left out: what a row is (each sink says; :mod:`netsim.records`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Iterable


class Sink(ABC):
    """Base of every sink: ``add`` is the one method a subclass must give."""

    #: the file this sink writes (``None``: rows kept in memory or dropped)
    path: str | None = None
    #: rows received so far (a subclass keeps it up to date)
    count: int = 0

    @abstractmethod
    def add(self, row) -> None:
        """Take one row."""

    def add_many(self, rows: Iterable) -> None:
        """Take ``rows`` in order (the flow backend hands over the records of one delivery together)."""
        add = self.add
        for row in rows:
            add(row)

    def flush(self) -> None:
        """Write what is buffered (default: nothing is)."""

    def close(self) -> None:
        """Finish: flush (a file sink also gives its file its final name)."""
        self.flush()
