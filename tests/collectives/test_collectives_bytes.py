"""Byte conservation: what each rank sends equals the algorithm's formula, whatever the chunking."""
from collections import Counter

import pytest

from coll_helpers import run_on, star
from netsim.collectives import run_collective


def _sent(rows):
    c = Counter()
    for r in rows:
        c[r.src] += r.size_bytes
    return c


def _recv(rows):
    c = Counter()
    for r in rows:
        c[r.dst] += r.size_bytes
    return c


def _pairs(rows):
    c = Counter()
    for r in rows:
        c[(r.src, r.dst)] += r.size_bytes
    return c


def _go(n, kind, S, **kw):
    nodes = [f"h{i}" for i in range(n)]
    be, rows, proc = run_on(star(n), lambda be: run_collective(be, kind, nodes, S, **kw))
    res = proc.value
    assert res.flows == len(rows) and res.bytes_sent == sum(r.size_bytes for r in rows)
    return nodes, rows, res


@pytest.mark.parametrize("algorithm", ["ring", "halving_doubling"])
@pytest.mark.parametrize("n", [2, 4, 8])
def test_allreduce_each_rank_sends_2_n_minus_1_over_n_S(n, algorithm):
    S = 8 * 3 * 1000
    nodes, rows, _ = _go(n, "allreduce", S, algorithm=algorithm)
    assert _sent(rows) == {x: 2 * (n - 1) * S // n for x in nodes}
    assert _recv(rows) == {x: 2 * (n - 1) * S // n for x in nodes}


@pytest.mark.parametrize("algorithm", ["ring", "halving_doubling", "tree"])
@pytest.mark.parametrize("n", [3, 5, 6, 7])
def test_allreduce_total_bytes_odd_sizes(n, algorithm):
    S = 1_000_003
    _, rows, _ = _go(n, "allreduce", S, algorithm=algorithm)
    total = sum(r.size_bytes for r in rows)
    if algorithm in ("ring", "tree"):
        # ring: every segment travels 2(n-1) hops; tree: each half goes up n-1 edges and down n-1 edges
        assert total == 2 * (n - 1) * S
    else:
        p = 1 << (n.bit_length() - 1)
        q = n - p
        assert total == 2 * q * S + 2 * (p - 1) * S


@pytest.mark.parametrize("kind,algorithm", [("allgather", "ring"), ("allgather", "halving_doubling"),
                                            ("reducescatter", "ring"), ("reducescatter", "halving_doubling"),
                                            ("alltoall", "direct"), ("alltoall", "pairwise")])
def test_n_minus_1_over_n(kind, algorithm):
    n, S = 8, 8 * 4096
    nodes, rows, _ = _go(n, kind, S, algorithm=algorithm)
    assert _sent(rows) == {x: (n - 1) * S // n for x in nodes}
    assert _recv(rows) == {x: (n - 1) * S // n for x in nodes}


@pytest.mark.parametrize("kind,algorithm", [("allreduce", "ring"), ("allreduce", "tree"),
                                            ("allreduce", "halving_doubling"), ("alltoall", "direct"),
                                            ("allgather", "ring"), ("broadcast", "ring"), ("broadcast", "tree"),
                                            ("reduce", "ring"), ("reduce", "tree"), ("sendrecv", "direct")])
def test_chunking_and_channels_do_not_change_bytes_per_pair(kind, algorithm):
    n = 2 if kind == "sendrecv" else 6
    S = 600_001
    _, base, r0 = _go(n, kind, S, algorithm=algorithm)
    _, chunked, r1 = _go(n, kind, S, algorithm=algorithm, chunk_bytes=7_000, channels=3)
    assert _pairs(chunked) == _pairs(base)
    assert r1.flows > r0.flows
    assert max(r.size_bytes for r in chunked) <= 7_000


def test_broadcast_and_reduce_move_S_per_tree_edge():
    n, S = 7, 123_457
    for kind in ("broadcast", "reduce"):
        for algorithm in ("ring", "tree"):
            nodes, rows, _ = _go(n, kind, S, algorithm=algorithm, root=3)
            assert sum(r.size_bytes for r in rows) == (n - 1) * S
            recv = _recv(rows)
            if kind == "broadcast":
                assert nodes[3] not in recv and all(recv[x] == S for x in nodes if x != nodes[3])
            else:
                assert nodes[3] not in _sent(rows)


def test_alltoall_nonuniform_matrix_is_sent_exactly():
    n = 4
    sizes = [[0, 10, 2000, 0], [5, 0, 0, 70_000], [1, 2, 3, 4], [9000, 0, 1, 0]]
    nodes = [f"h{i}" for i in range(n)]
    for algorithm in ("direct", "pairwise"):
        _, rows, _ = run_on(star(n), lambda be: run_collective(be, "alltoall", nodes, 0, sizes=sizes,
                                                                algorithm=algorithm, chunk_bytes=1000))
        got = _pairs(rows)
        want = {(nodes[i], nodes[j]): sizes[i][j] for i in range(n) for j in range(n) if i != j and sizes[i][j]}
        assert dict(got) == want
