"""Every flow carries the caller's tag plus collective and step; steps follow the data dependencies."""
from collections import Counter

import pytest

from coll_helpers import run_on, star
from netsim.collectives import run_collective
from netsim.records import FlowTag

TAG = FlowTag(tag="t", iteration=3, op="layer7.tp_ar", group="tp")


@pytest.mark.parametrize("kind,algorithm,steps", [
    ("allreduce", "ring", lambda n: range(2 * (n - 1))),
    ("allreduce", "halving_doubling", lambda n: range(2 * 3)),
    ("allreduce", "tree", lambda n: range(2 * 3)),
    ("reducescatter", "ring", lambda n: range(n - 1)),
    ("allgather", "halving_doubling", lambda n: range(3)),
    ("alltoall", "direct", lambda n: range(1, n)),
    ("alltoall", "pairwise", lambda n: range(1, n)),
    ("broadcast", "ring", lambda n: range(n - 1)),
])
def test_tags_carry_caller_fields_collective_and_step(kind, algorithm, steps):
    n = 8
    nodes = [f"h{i}" for i in range(n)]
    _, rows, _ = run_on(star(n), lambda be: run_collective(be, kind, nodes, 80_000, algorithm=algorithm,
                                                            tag=TAG, chunk_bytes=4000))
    assert rows
    for r in rows:
        assert (r.tag, r.iteration, r.op, r.group, r.collective) == ("t", 3, "layer7.tp_ar", "tp", kind)
    assert {r.step for r in rows} == set(steps(n))


def test_ring_step_k_flows_from_rank_r_carry_segment_r_minus_k():
    n, seg = 5, 1000
    nodes = [f"h{i}" for i in range(n)]
    _, rows, _ = run_on(star(n), lambda be: run_collective(be, "allreduce", nodes, n * seg, tag=TAG))
    per_step = Counter(r.step for r in rows)
    assert per_step == {k: n for k in range(2 * (n - 1))}  # one flow per rank per step
    for r in rows:  # every flow goes to the ring successor
        assert int(r.dst[1:]) == (int(r.src[1:]) + 1) % n


def test_ring_rank_sends_step_k_only_after_receiving_step_k_minus_1():
    n = 6
    nodes = [f"h{i}" for i in range(n)]
    _, rows, _ = run_on(star(n), lambda be: run_collective(be, "allreduce", nodes, 6 * 50_000, tag=TAG))
    recv_end = {(r.dst, r.step): r.end_ns for r in rows}
    for r in rows:
        if r.step > 0:
            assert r.start_ns >= recv_end[(r.src, r.step - 1)]
            assert r.start_ns == recv_end[(r.src, r.step - 1)]  # analytic backend: forwarded at once


@pytest.mark.parametrize("sharing", ["fair", "fifo"])
def test_chunks_pipeline_a_chain(sharing):
    """Chunked broadcast down a chain of 8: a rank forwards chunk j before chunk j+1 has arrived."""
    n, S = 8, 1_000_000
    nodes = [f"h{i}" for i in range(n)]
    times = {}
    for chunk in (None, 50_000):
        _, rows, p = run_on(star(n), lambda be: run_collective(be, "broadcast", nodes, S, chunk_bytes=chunk),
                            params={"source_sharing": sharing})
        times[chunk] = p.value.time_s
    assert times[50_000] < 0.35 * times[None]  # unchunked: 7 full hops; chunked: ~1 + 7/20 x 2
