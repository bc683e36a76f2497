import networkx as nx
import pytest


def star(n_gpus: int, rate_bps: float = 1e18, delay_ns: float = 0.0) -> nx.Graph:
    """n GPUs on one switch: with huge rates and no delay, communication is free."""
    g = nx.Graph(name=f"star{n_gpus}")
    g.add_node("sw", kind="switch")
    for i in range(n_gpus):
        g.add_node(f"s{i}.gpu0", kind="gpu", server=f"s{i}", index=0)
        g.add_edge(f"s{i}.gpu0", "sw", rate_bps=rate_bps, delay_ns=delay_ns, kind="ethernet")
    return g


@pytest.fixture
def free_network():
    return star
