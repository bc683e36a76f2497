"""Where an iteration's time went: compute, optimizer, tp, pp, dp, ep, bubble, other.

Method (the values sum exactly to the iteration time):

1. The iteration's window is [end of the previous iteration, end of this one]
   (the end = when its last op finishes).  The *critical rank* R is the rank of
   the op that finishes last (normally an optimizer step).
2. While R's compute stream is busy, time goes to ``compute`` (forward,
   backward, recomputation) or ``optimizer`` (the optimizer step).
3. Every gap in R's compute stream is explained by walking the critical path
   back from the compute op that ends the gap: at each step the dependency
   that finished last.  Time on an op R takes part in (its TP all-reduce, the
   pipeline transfer it receives, its DP bucket, an all-to-all) goes to that
   op's group kind: the *exposed* communication.  Time on ops of other
   pipeline stages — R waiting for work upstream/downstream, pipeline warm-up
   and cool-down — goes to ``bubble``; time on ops of R's own stage that R
   does not take part in (waiting for a slower peer) goes to ``other``, and
   so does any time no op explains.

With free communication this gives exactly APNet'24's split for a pipeline:
compute = m·(t_f + t_b) and bubble = (p − 1)·(t_f + t_b) on the first stage.
Communication hidden behind compute (DP buckets overlapping backward) costs
nothing here, as it should.

*Bubble per stage* (:func:`stage_bubbles`): the same walk for one rank of
every stage (data- and tensor-parallel index 0), where the idle time after
the rank's last op of the iteration — waiting for the other stages to finish —
counts as bubble too.  With free communication every stage's bubble is then
the schedule's closed form, e.g. (p−1)·(T_F+T_B) for 1F1B on every stage.
"""
from __future__ import annotations

KEYS = ("compute", "optimizer", "tp", "pp", "dp", "ep", "bubble", "other")
#: what each key means, for the CLI's summary lines
LABELS = {"compute": "compute", "optimizer": "optimizer step", "tp": "tp", "pp": "pp", "dp": "dp", "ep": "ep",
          "bubble": "bubble", "other": "other (waiting for a slower peer of the same stage)"}


def _latest_dep(op, rank: int):
    best, key = None, None
    for d in op.deps:
        k = (d.end_ps, rank in d.ranks, d.seq)
        if key is None or k > key:
            best, key = d, k
    return best


def iteration_breakdown(ops_of_rank, start_ps: int, end_ps: int, rank: int, stage_of,
                        tail_key: str = "other", last_op=None) -> dict[str, int]:
    """Attribute [start_ps, end_ps] of ``rank``'s timeline (ps per key of :data:`KEYS`).

    Parameters
    ----------
    ops_of_rank : list of Op
        The compute/optimizer ops of ``rank`` (any iterations), in stream order.
    stage_of : callable(rank) -> int
        Pipeline stage of a rank.
    tail_key : str
        Where the idle time after the rank's last compute op in the window goes when ``last_op`` is not given
        (or leaves part of it unexplained).
    last_op : Op, optional
        The op that ends the window.  The time after the rank's last compute op is then explained like a gap,
        walking the critical path back from ``last_op``: exposed DP/TP/EP/PP communication after the last
        compute (a trace ending in its gradient all-reduce) goes to the kind of its op.
    """
    out = dict.fromkeys(KEYS, 0)
    my_stage = stage_of(rank)
    t = start_ps
    for op in ops_of_rank:
        if op.end_ps < start_ps:
            continue
        if op.start_ps > end_ps or t >= end_ps:
            break
        s, e = max(op.start_ps, start_ps), min(op.end_ps, end_ps)
        if s > t:
            _explain_gap(_latest_dep(op, rank), t, s, rank, my_stage, stage_of, out)
        s = max(s, t)               # an op beside the previous one (a SimAI update delay): only its new time
        if e > s:
            out["optimizer" if op.kind == "optimizer" else "compute"] += e - s
        t = max(t, e, s)
    if t < end_ps:
        if last_op is not None and last_op.kind not in ("compute", "optimizer") and last_op.end_ps >= end_ps:
            _explain_gap(last_op, t, end_ps, rank, my_stage, stage_of, out, rest=tail_key)
        else:
            out[tail_key] += end_ps - t
    return out


def _explain_gap(cur, g0: int, g1: int, rank: int, my_stage: int, stage_of, out: dict, rest: str = "other") -> None:
    """Attribute [g0, g1] walking back from op ``cur`` (the latest-finishing dependency); ``rest``: unexplained."""
    t = g1
    while t > g0 and cur is not None:
        if cur.end_ps < t:
            out["other"] += t - max(cur.end_ps, g0)
            t = max(cur.end_ps, g0)
            if t <= g0:
                break
        seg0 = max(cur.start_ps, g0)
        if rank in cur.ranks:
            key = cur.kind if cur.kind in out else "compute"
        elif any(stage_of(r) != my_stage for r in cur.ranks):
            key = "bubble"
        else:
            key = "other"
        out[key] += t - seg0
        t = seg0
        cur = _latest_dep(cur, rank)
    if t > g0:
        out[rest] += t - g0


def _compute_ops(executor) -> dict[int, list]:
    comp: dict[int, list] = {}
    for it in sorted(executor.iteration_ops):
        for op in executor.iteration_ops[it]:
            if op.kind in ("compute", "optimizer"):
                comp.setdefault(op.ranks[0], []).append(op)
    for lst in comp.values():
        lst.sort(key=lambda o: (o.start_ps, o.seq))
    return comp


def stage_bubbles(executor, placement, stages: int) -> list[list[int]]:
    """Per iteration, per pipeline stage: the bubble (ps) of the stage's rank with dp and tp index 0."""
    return rank_bubbles(executor, [placement.rank_at(0, 0, s) for s in range(stages)], placement.stage)


def rank_bubbles(executor, ranks, stage_of) -> list[list[int]]:
    """Per iteration, per rank of ``ranks`` (one per stage): its bubble (ps), as :func:`stage_bubbles`.

    ``stage_of(rank)``: the pipeline stage of a rank (an imported job's, inferred from its op graph).
    """
    comp = _compute_ops(executor)
    out, prev_end = [], 0
    for it in sorted(executor.iteration_end_ps):
        end = executor.iteration_end_ps[it]
        out.append([iteration_breakdown(comp.get(rank, []), prev_end, end, rank, stage_of,
                                        tail_key="bubble")["bubble"] for rank in ranks])
        prev_end = end
    return out


def breakdowns(executor, placement, start_ps: int = 0) -> tuple[list[dict], list[int]]:
    """Per iteration: the breakdown in ps and the critical rank (iteration 0 from ``start_ps``)."""
    comp = _compute_ops(executor)
    out, ranks = [], []
    prev_end = start_ps
    for it in sorted(executor.iteration_end_ps):
        end = executor.iteration_end_ps[it]
        last = max(executor.iteration_ops[it], key=lambda o: (o.end_ps, o.kind == "optimizer", -o.seq))
        rank = last.ranks[0] if last.kind in ("compute", "optimizer") else min(last.ranks)
        out.append(iteration_breakdown(comp.get(rank, []), prev_end, end, rank, placement.stage, last_op=last))
        ranks.append(rank)
        prev_end = end
    return out, ranks
