"""Context parallelism in the op graph: ring attention over the CP group (Megatron-LM's ``--context-parallel-size``).

A mixin of :class:`netsim.workloads.generate.OpGraphBuilder`.  With cp > 1
each rank of a CP group holds s/cp tokens of every sequence (Megatron splits
the sequence into 2·cp chunks and gives rank c chunks c and 2·cp−1−c, which
balances causal attention), so every block's compute, every TP all-reduce and
every pipeline message is 1/cp of the cp = 1 one.  The attention block runs
as ring attention (Liu et al. 2023; Megatron-Core's ``AttnFuncWithCPAndKVP2P``):

* forward (and its recomputation): QKV projection, then cp steps of the
  attention core, one per K/V block; before step k ≥ 1 the block held by the
  previous ring member must have arrived, so there are cp − 1 ring sends per
  rank, each of the K and V of s/cp tokens: ``C = 2·(s/cp)·b·(h/t)`` values ×
  activation bytes.  A send starts as soon as its block is there (K/V of the
  rank's own tokens after the QKV projection, a received block at once), so
  it overlaps the core compute of the current block; then the output
  projection and the block's TP all-reduce;
* backward: output-projection backward, then cp core-backward steps with
  the K/V blocks passed around again (cp − 1 sends of C) and each block's
  partial dK/dV travelling behind it (cp sends of C: after step k a rank
  sends the dK/dV it accumulated for the block it holds; the last one returns
  each block's gradient to its owner), then the QKV backward, which waits for
  the rank's own dK/dV.

With a split backward (ZB-H1, custom schedules with W actions) the ring
runs in the B pass with the block's input-gradient time (its backward less
the W share, :func:`netsim.workloads.chunks.split_ps`, as at cp = 1); the W
pass is the block's weight-gradient compute alone, no ring sends (weight
gradients need no K/V of other ranks).

MoE layers: their attention is ring attention as above and their MoE block
routes the rank's b·s/cp tokens over its EP group (EP groups are carved out
of the DP×CP group, as Megatron-Core's expert groups are), so dispatch,
combine and expert compute are 1/cp of the cp = 1 ones.

The attention block's time is split in FLOP proportion: QKV 6h, core 4s,
projection 2h out of 8h + 4s (per token and t: 6sh², 4s²h, 2sh² of
8sh² + 4s²h), the core evenly over the cp steps.  Ring sends are
point-to-point ops (kind ``pp``, group ``cpN``, ``collectives.pp``
settings).  Gradients are all-reduced over the DP×CP group (the placement's
``dp`` groups, :mod:`.placement`).  Left out: the softmax-rescaling and
merging kernels, the causal mask's idle half-blocks (balanced away by the
2·cp chunking), grouped-query attention (fewer K/V heads).
"""
from __future__ import annotations

from .ops import Op


def attention_split_ps(total_ps: int, seq: int, hidden: int, cp: int) -> tuple[int, list[int], int]:
    """(QKV ps, core ps per ring step, projection ps) of an attention pass of ``total_ps``.

    Shares by FLOPs: QKV 6h, core 4s, projection 2h of 8h + 4s; the core is
    split into ``cp`` near-equal steps; the parts sum to ``total_ps`` exactly.

    >>> attention_split_ps(1000, seq=2048, hidden=2048, cp=4)
    (500, [84, 83, 83, 83], 167)
    """
    den = 8 * hidden + 4 * seq
    core = total_ps * 4 * seq // den
    qkv = total_ps * 6 * hidden // den
    proj = total_ps - qkv - core
    return qkv, [core // cp + (1 if k < core % cp else 0) for k in range(cp)], proj


def kv_chunk_bytes(seq: int, micro_batch: int, hidden: int, tp: int, cp: int, act_bytes: int) -> int:
    """Bytes of one ring step's K and V block: 2·(s/cp)·b·(h/t) values × ``act_bytes``."""
    return 2 * (seq // cp) * micro_batch * (hidden // tp) * act_bytes


class ContextParallel:
    """Ring attention (mixin of the op-graph builder)."""

    def _ring_send(self, ring, pos: int, what: str, step: int, name: str, size: int) -> Op:
        """The ``what`` (``kv`` or ``dkv``) send of ring step ``step`` from ring member ``pos`` to the next."""
        n = len(ring)
        src, dst = ring[pos], ring[(pos + 1) % n]
        cg = self.pl.group_of["cp"][src]
        op, _ = self._shared_op(("cp", name, what, cg, step, pos), lambda: Op(
            f"cp{cg}.{name}.{what}{step}.c{pos}-c{(pos + 1) % n}", "pp", (src, dst), self.it, group=f"cp{cg}",
            collective="send", size_bytes=size, spec=self.w.collectives["pp"]))
        return op

    def _ring_attention(self, s: int, tg, li: int, bi: int, name: str, phase: str, last: bool) -> None:
        """Compute and ring sends of one attention pass (F, R or B) on every rank of TP group ``tg``."""
        w, cp = self.w, self.cp
        m = w.model
        f, _, r_ps = self.times[s][li][bi]
        total = {"F": f, "R": r_ps}[phase] if phase != "B" else self._phase_ps(s, li, bi, "B", True)
        qkv, cores, proj = attention_split_ps(total, m.seq_len, m.hidden, cp)
        size = kv_chunk_bytes(m.seq_len, self.b, m.hidden, w.tp, cp, w.act_bytes)
        for r in tg:
            ring = self.pl.groups["cp"][self.pl.group_of["cp"][r]]
            me = ring.index(r)
            prev = (me - 1) % cp
            self._compute(r, name + (".proj" if phase == "B" else ".qkv"), proj if phase == "B" else qkv)
            for k in range(cp - 1):                       # K/V blocks around the ring
                op = self._ring_send(ring, me, "kv", k, name, size)
                op.deps.append(self.cur[r] if k == 0 else self._ring_send(ring, prev, "kv", k - 1, name, size))
            for k in range(cp):
                if k > 0:
                    self.pending.setdefault(r, []).append(self._ring_send(ring, prev, "kv", k - 1, name, size))
                self._compute(r, f"{name}.core{k}", cores[k])
                if phase == "B":                          # dK/dV of the held block travel behind it
                    op = self._ring_send(ring, me, "dkv", k, name, size)
                    op.deps.append(self.cur[r])
                    if k > 0:
                        op.deps.append(self._ring_send(ring, prev, "dkv", k - 1, name, size))
            if phase == "B":
                self.pending.setdefault(r, []).append(self._ring_send(ring, prev, "dkv", cp - 1, name, size))
            self._compute(r, name + (".qkv" if phase == "B" else ".proj"), qkv if phase == "B" else proj)
            if last and phase == "B":
                self.ready[(r, li, bi)] = self.cur[r]
