"""Runtime: executes a workload's operation graph on a backend (``run_training``).

:mod:`.executor` runs the DAG, :mod:`.breakdown` attributes the iteration time,
:mod:`.apnet` gives APNet'24's closed form, :mod:`.api` ties them together.
"""
from .api import run_training

__all__ = ["run_training"]
