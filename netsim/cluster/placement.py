"""Which GPUs each job of a cluster gets: explicit lists and the placement policies.

Jobs are placed in file order; each takes its GPUs from those earlier jobs
left free (an explicit list that names a GPU another job holds is an error
naming both jobs and the GPU). ``free`` below is the topology's canonical GPU
order (:func:`netsim.topology.gpus`: server-major, then local index) minus the
GPUs taken. ``N`` is the job's world size. Rank ``r`` runs on the ``r``-th GPU of
the list a policy returns:

* ``packed``: the first ``N`` GPUs of ``free``.
* ``spread``: ``free`` re-ordered local-index-major (every server's first free
  GPU, in server order, then every server's second, ...), first ``N``: the job
  touches as many servers as it can.
* ``random``: ``N`` GPUs drawn uniformly without replacement from ``free``
  (``numpy.random.default_rng(seed)``), kept in canonical order.
* ``rail_aligned``: with ``k = min(N, G)`` (``G`` GPUs per server, the largest
  count), the job takes local indices ``0..k-1`` on each of the first ``N/k``
  servers (in canonical order) where all of them are free, so ranks ``r`` and
  ``r + k`` share a local index (a rail of a rail-optimised fabric). ``N`` must
  be a multiple of ``k``.
* ``nic_aware``: the ``packed`` GPUs re-ordered so each stage's TP and DP groups
  sit in one same-NIC cluster (:func:`netsim.workloads.hetero.nic_aware_gpu_order`);
  netsim workloads only.

Left out: topology-aware searches (minimising hops or oversubscribed links) and
any policy that moves a job once placed.
"""
from __future__ import annotations

from ..errors import InputError
from .spec import JobSpec


def _slots(graph) -> dict:
    """GPU -> (server key, local index): the ``server``/``index`` attributes, else the GPU's scale-up domain
    (:func:`netsim.topology.domains.domain_keys`) and its position there in canonical order — so a
    hand-written topology without ``server:`` spreads and rail-aligns over its servers too."""
    from ..topology import gpus
    from ..topology.domains import domain_keys
    keys, seen, out = domain_keys(graph), {}, {}
    for g in gpus(graph):
        key = keys.get(g, ("gpu", g))
        pos = seen[key] = seen.get(key, -1) + 1
        d = graph.nodes[g]
        out[g] = (key, int(d["index"]) if "index" in d else pos)
    return out


def _spread(graph, free: list) -> list:
    rank_in_server: dict = {}
    keyed, slots = [], _slots(graph)
    for pos, g in enumerate(free):
        server = slots[g][0]
        k = rank_in_server.get(server, 0)
        rank_in_server[server] = k + 1
        keyed.append((k, pos, g))
    return [g for _, _, g in sorted(keyed)]


def _rail_aligned(graph, free: list, n: int, job: JobSpec, source: str) -> list:
    by_server: dict = {}
    slots = _slots(graph)
    for g in free:
        server, idx = slots[g]
        by_server.setdefault(server, {})[idx] = g
    from ..topology import gpus
    per_server: dict = {}
    for g in gpus(graph):
        s = slots[g][0]
        per_server[s] = per_server.get(s, 0) + 1
    k = min(n, max(per_server.values()))
    if n % k:
        raise InputError("rail_aligned needs a world size that is a multiple of the GPUs it takes per server",
                         source=source, where=f"job {job.name}, placement", value=n, accepted=f"a multiple of {k}")
    out = []
    for server, idx in by_server.items():
        if len(out) == n:
            break
        if all(i in idx for i in range(k)):
            out.extend(idx[i] for i in range(k))
    return out


def choose_gpus(graph, job: JobSpec, n: int, free: list, *, workload=None, source: str = "") -> list:
    """The GPU list (rank order) of ``job`` with world size ``n``, from the canonical-order ``free`` list."""
    p = job.placement
    where = f"job {job.name}, placement"
    if p.policy == "explicit":
        if len(p.gpus) != n:
            raise InputError("an explicit placement lists one GPU per rank", source=source, where=where,
                             value=len(p.gpus), accepted=f"{n} GPU names (the job's world size)")
        return list(p.gpus)
    if p.policy == "packed":
        out = free[:n]
    elif p.policy == "spread":
        out = _spread(graph, free)[:n]
    elif p.policy == "random":
        import numpy as np
        if len(free) >= n:
            pick = np.random.default_rng(p.seed).choice(len(free), size=n, replace=False)
            out = [free[i] for i in sorted(int(i) for i in pick)]
        else:
            out = free
    elif p.policy == "rail_aligned":
        out = _rail_aligned(graph, free, n, job, source)
    else:                                       # nic_aware
        if workload is None or not hasattr(workload, "dp"):
            raise InputError("nic_aware placement needs a netsim workload (dp/tp/pp)", source=source, where=where,
                             value=p.policy, accepted="packed, spread, random, rail_aligned or a GPU list")
        out = free[:n]
        if len(out) == n:
            from ..workloads.hetero import nic_aware_gpu_order
            out = list(nic_aware_gpu_order(graph, workload.dp, workload.tp, workload.pp, out))
    if len(out) < n:
        raise InputError("not enough free GPUs for the job", source=source, where=where, value=p.policy,
                         accepted=f"{n} GPUs; {len(free)} are left after the jobs before it")
    return out


def check_disjoint(placed: dict, graph, source: str = "") -> None:
    """Every GPU of ``placed`` (job name -> GPU list) exists and belongs to one job only."""
    owner: dict[str, str] = {}
    for name, gpus_ in placed.items():
        for g in gpus_:
            if g not in graph or graph.nodes[g].get("kind") not in ("gpu", "host"):
                raise InputError("no such GPU in the topology", source=source, where=f"job {name}, placement",
                                 value=g, accepted="GPU names of the topology")
            if g in owner:
                raise InputError(f"jobs {owner[g]} and {name} both hold GPU {g}", source=source,
                                 where=f"job {name}, placement", value=g, accepted="disjoint GPU sets")
            owner[g] = name
