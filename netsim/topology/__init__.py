"""Topology layer: the graph contract, builders, file io and routing.

A topology is a plain networkx graph (see :mod:`.schema` and docs/topology.md).
This package knows nothing of SimPy.
"""
from . import builders
from .builders import BUILDERS, dumbbell, fat_tree, gpu_cluster, gpu_server, leaf_spine, two_clusters
from .io import build, build_expression, load_topology, save_topology
from .query import endpoints, gpus, hosts, natural_key, nic_of, server_of
from .routing import Router, bottleneck_rate_bps, path_delay_ns, path_links
from .schema import EDGE_KINDS, ENDPOINT_KINDS, NIC_KINDS, NODE_KINDS, validate
from .summary import bisection_bandwidth_bps, format_summary, summary

__all__ = [
    "BUILDERS", "EDGE_KINDS", "ENDPOINT_KINDS", "NIC_KINDS", "NODE_KINDS", "Router", "bisection_bandwidth_bps",
    "bottleneck_rate_bps", "build", "build_expression", "builders", "dumbbell", "endpoints", "fat_tree",
    "format_summary", "gpu_cluster", "gpu_server", "gpus", "hosts", "leaf_spine", "load_topology", "natural_key",
    "nic_of", "path_delay_ns", "path_links", "save_topology", "server_of", "summary", "two_clusters", "validate",
]
