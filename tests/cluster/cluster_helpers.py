"""Shared fixtures of the cluster tests: tiny hand-built fabrics and data-parallel workloads."""
import networkx as nx

#: line rate of every link of the hand-built fabrics (bit/s)
RATE_BPS = 100e9


def dp_workload(dp: int = 2, layers: int = 2, hidden: int = 256, name: str = "dp") -> dict:
    """A GPT-style data-parallel workload whose compute is negligible (1e18 FLOP/s): its time is its all-reduce."""
    return {"name": name, "model": {"preset": "gpt-1.5b", "layers": layers, "hidden": hidden, "heads": 4,
                                    "seq_len": 64, "vocab": 256},
            "training": {"global_batch": dp, "micro_batch": 1}, "parallelism": {"dp": dp},
            "compute": {"peak_flops": 1e18, "utilization": 1.0}}


def two_leaves(gpus_per_leaf: int = 2, rate_bps: float = RATE_BPS, delay_ns: float = 0.0) -> nx.Graph:
    """Two switches joined by ONE link (the bottleneck), ``gpus_per_leaf`` one-GPU servers on each.

    Leaf 0 holds servers s0..s{k-1}, leaf 1 the next k; every link runs at ``rate_bps``."""
    g = nx.Graph(name="two_leaves")
    for leaf in ("leaf0", "leaf1"):
        g.add_node(leaf, kind="switch")
    g.add_edge("leaf0", "leaf1", rate_bps=rate_bps, delay_ns=delay_ns, kind="ethernet")
    for i in range(2 * gpus_per_leaf):
        gpu = f"s{i}.gpu0"
        g.add_node(gpu, kind="gpu", server=f"s{i}", index=0)
        g.add_edge(gpu, "leaf0" if i < gpus_per_leaf else "leaf1", rate_bps=rate_bps, delay_ns=delay_ns,
                   kind="ethernet")
    return g
