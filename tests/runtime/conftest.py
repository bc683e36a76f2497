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


def layer_workload(dp: int = 1, *, layers: int = 3, params: int = 1000, fwd_ms: float = 1.0, bwd_ms: float = 2.0,
                   first_bucket_bytes: int | None = None, **sections) -> dict:
    """A DP-only layer-list job with fixed per-layer times and no optimizer step: compute is exactly
    ``layers · (fwd_ms + bwd_ms)`` per iteration; gradients are fp16 (2 bytes per parameter)."""
    par = {"dp": dp, "bucket_bytes": 2**40}
    if first_bucket_bytes is not None:
        par["first_bucket_bytes"] = first_bucket_bytes
    return {"name": "lw", "model": {"layer_list": [{"name": f"l{i}", "params": params, "fwd_flops": 1e9}
                                                   for i in range(layers)]},
            "training": {"global_batch": dp, "micro_batch": 1, "precision": "fp16"}, "parallelism": par,
            "compute": {"layer_times_ms": {"default": [fwd_ms, bwd_ms]}, "optimizer": "none"}, **sections}


@pytest.fixture
def layer_job():
    return layer_workload
