"""Garbage-collector thresholds for the length of a simulation run.

A simulation allocates millions of short-lived objects (events, packets,
flow records) next to a large, slowly growing set of long-lived ones (the
topology, paths, flows in flight). CPython's default thresholds
``(700, 10, 10)`` run a full collection whenever the long-lived heap has
grown by a quarter since the last one, and each full collection walks the
whole heap: a 1,024-GPU flow-backend step (400 MiB) made 26 of them at
~240 ms each. With :data:`THRESHOLDS` young objects are still collected in
generations 0 and 1 — where simulation garbage dies, cycles included — and
full collections become rare. Measured on that step (same machine, one
session): 51.1 s → 44.2 s wall, peak RSS 400 → 403 MiB (collection disabled
altogether: 43.0 s but 674 MiB). Outputs do not depend on it.

>>> import gc
>>> before = gc.get_threshold()
>>> with tuned_gc():
...     gc.get_threshold() == THRESHOLDS
True
>>> gc.get_threshold() == before
True
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

#: (generation 0 allocations, gen-0 collections per gen 1, gen-1 collections per full collection);
#: CPython gc module documentation for their meaning; values measured as above
THRESHOLDS = (100_000, 50, 100)


@contextmanager
def tuned_gc():
    """Use :data:`THRESHOLDS` inside the block; restore the previous thresholds after it."""
    old = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*old)
