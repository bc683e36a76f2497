"""What a routed path is made of: its directed links, its bottleneck rate and its propagation delay.

Models a path (a sequence of node names, as :meth:`.routing.Router.path`
returns) read against the graph's link attributes: ``rate_bps`` (the
bottleneck is the minimum) and ``delay_ns`` (propagation only, summed).
Leaves out serialization, queueing and host-stack time (the network layer's
path model, :mod:`netsim.network`) and choosing the path (:mod:`.routing`).
"""
from __future__ import annotations

from typing import Sequence

import networkx as nx


def path_links(path: Sequence) -> list[tuple]:
    """Directed links ``(u, v)`` along ``path``.

    >>> path_links(("a", "b", "c"))
    [('a', 'b'), ('b', 'c')]
    """
    return list(zip(path[:-1], path[1:]))


def bottleneck_rate_bps(graph: nx.Graph, path: Sequence) -> float:
    """Lowest ``rate_bps`` along ``path``, bit/s."""
    return min(graph.edges[u, v]["rate_bps"] for u, v in path_links(path))


def path_delay_ns(graph: nx.Graph, path: Sequence) -> float:
    """Sum of ``delay_ns`` (propagation only) along ``path``, ns."""
    return sum(graph.edges[u, v]["delay_ns"] for u, v in path_links(path))
