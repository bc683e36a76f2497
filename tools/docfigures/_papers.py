"""The papers' validation harness (``tests/validation/papers_sim.py``) for the figure scripts.

The scripts reuse the runs the ``tests/validation/test_papers_*.py`` checks make,
so a documented figure is what the tests see.
"""
from __future__ import annotations

import os
import sys

from . import ROOT


def harness():
    """The ``papers_sim`` module of ``tests/validation``."""
    path = os.path.join(ROOT, "tests", "validation")
    if path not in sys.path:
        sys.path.insert(0, path)
    import papers_sim
    return papers_sim
