"""The packet backend on GPU-to-GPU topologies (gpu_forwarding): GPUs relay packets (packet/node.RelayEndpoint)."""
import pytest

from netsim.backends.base import create_backend
from netsim.collectives import run_collective
from netsim.topology import gpus, load_topology

MIB = 1 << 20


def _time_ps(backend, graph, kind, nodes, size, **kw):
    be = create_backend(backend, graph)
    be.env.run(run_collective(be, kind, nodes, size, **kw))
    return be.env.now


def test_ring_allreduce_on_a_gpu_ring_matches_the_flow_backend():
    g = load_topology("gpu_ring:gpus=4")
    t = {b: _time_ps(b, g, "allreduce", gpus(g), 4 * MIB) for b in ("packet", "flow")}
    assert t["packet"] == pytest.approx(t["flow"], rel=1e-4)


def test_a_flow_relayed_by_two_gpus_matches_the_flow_backend_and_is_delivered_once():
    g = load_topology("gpu_ring:gpus=7")
    src, dst = gpus(g)[0], gpus(g)[3]                 # 3 hops: gpu1 and gpu2 relay
    t = {b: _time_ps(b, g, "sendrecv", [src, dst], MIB) for b in ("packet", "flow")}
    assert t["packet"] == pytest.approx(t["flow"], rel=1e-4)
    be = create_backend("packet", g)
    be.env.run(run_collective(be, "sendrecv", [src, dst], MIB))
    st = be.stats()
    # all of it arrives, nothing dropped; a packet delivered early at a relay would also have cut the FCT by a
    # hop's latency (100 ns of 2.7 us: far outside the 1e-4 match above)
    assert st["bytes_delivered"] == MIB and st["drops"] == 0 and st["completed"] == 1


def test_relayed_alltoall_respects_the_link_load_bound():
    """5-ring all-to-all: every directed link carries 3 MiB (distance-1 and distance-2 flows); no run beats that."""
    g = load_topology("gpu_ring:gpus=5")           # odd ring: one shortest path per pair
    size = 5 * MIB                                  # 1 MiB to each peer
    t = _time_ps("packet", g, "alltoall", gpus(g), size)
    per_link_bytes = (1 + 2) * MIB                 # distance-1 and distance-2 flows crossing each directed link
    bound_ps = per_link_bytes * 8 / 3.6e12 * 1e12
    assert bound_ps < t < 1.3 * bound_ps
