"""Several training jobs (and background traffic) on one fabric: the cluster file and its runner.

:func:`run_cluster` is the Python twin of ``netsim run TOPOLOGY CLUSTER.yaml``
(docs/cluster.md): :mod:`.spec` reads the file, :mod:`.placement` and
:mod:`.jobs` place and build the jobs, :mod:`.runner` runs them on one backend,
:mod:`.results` and :mod:`.alone` give per-job times, slowdowns and the
interference table; :mod:`.bench` is ``netsim bench cluster_gpt3b_4x32``.
"""
from .api import run_cluster
from .spec import ClusterSpec, is_cluster_file, load_cluster

__all__ = ["run_cluster", "ClusterSpec", "is_cluster_file", "load_cluster"]
