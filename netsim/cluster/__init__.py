"""Several training jobs (and background traffic) on one fabric: the cluster file and its runner.

:func:`run_cluster` is the Python twin of ``netsim run TOPOLOGY CLUSTER.yaml``
(docs/cluster.md): :mod:`.spec` reads the file, :mod:`.placement` and
:mod:`.jobs` place and build the jobs, :mod:`.runner` runs them on one backend,
:mod:`.results` and :mod:`.alone` give per-job times, slowdowns and the
interference table; :mod:`.bench` is ``netsim bench cluster_gpt3b_4x32``.

The names are imported from their modules on first use: ``netsim run`` asks
:func:`is_cluster_file` of every workload, which imports :mod:`.spec` only, not
the runner.
"""
from __future__ import annotations

import importlib

#: public name -> the submodule that defines it
_WHERE = {"run_cluster": "api", "ClusterSpec": "spec", "is_cluster_file": "spec", "load_cluster": "spec"}

__all__ = ["run_cluster", "ClusterSpec", "is_cluster_file", "load_cluster"]


def __getattr__(name: str):
    """A public name, imported from its submodule on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
