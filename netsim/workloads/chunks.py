"""Which layers each pipeline device holds, per model chunk, and the split of a backward into B and W.

* Without interleaving (v = 1) device s holds its contiguous layer counts
  (``Workload.stage_layer_counts``), the first-stage extras (embeddings) on
  device 0 and the last-stage extras (logits, loss) on device p−1.
* Interleaved (v > 1, Narayanan et al. SC'21 §2.2): the body is cut into p·v
  equal virtual stages and chunk c of device d holds virtual stage c·p + d, so
  a device's layers are non-contiguous; the embeddings go with virtual stage
  0, the logits with virtual stage p·v − 1.
* Backward split (ZB-H1, custom schedules with W passes): a block with
  parameters spends :data:`W_SHARE_OF_BACKWARD` of its backward time on the
  weight gradient W and the rest on the input gradient B (recomputation runs
  before B); a block without parameters has no W.

Left out: uneven (or ``balanced``) partitions with v > 1, and per-block B/W
ratios other than the linear layer's.
"""
from __future__ import annotations

from typing import NamedTuple

#: share of a parameterised block's backward time that is the weight gradient W.  For a linear layer
#: Y = XA the backward is two GEMMs of the forward's size, dX = dY·Aᵀ and dA = Xᵀ·dY, so B = W =
#: the forward's FLOPs (Qi et al., ICLR'24 "Zero Bubble Pipeline Parallelism" §2, Table 1);
#: attention's score/softmax products (no weights) are counted in the same ratio.
W_SHARE_OF_BACKWARD = 0.5


class Span(NamedTuple):
    """Layers ``start``..``end``−1 of a device's layer list form chunk ``chunk`` (virtual stage ``virtual``)."""

    chunk: int
    virtual: int
    start: int
    end: int


def device_layers(body, first, last, counts, stages: int, virtual_stages: int):
    """(layers per device, spans per device): the device's layers in chunk order and each chunk's span."""
    p, v = stages, virtual_stages
    if v == 1:
        groups, start = [], 0
        for n in counts:
            groups.append(list(body[start:start + n]))
            start += n
    else:
        per = len(body) // (p * v)
        groups = [list(body[u * per:(u + 1) * per]) for u in range(p * v)]
    groups[0] = list(first) + groups[0]
    groups[-1] = groups[-1] + list(last)
    layers, spans = [], []
    for d in range(p):
        mine, sp = [], []
        for c in range(v):
            u = c * p + d
            sp.append(Span(c, u, len(mine), len(mine) + len(groups[u])))
            mine += groups[u]
        layers.append(mine)
        spans.append(sp)
    return layers, spans


def split_ps(backward_ps: int, has_params: bool) -> tuple[int, int]:
    """(B ps, W ps) of a block's backward of ``backward_ps`` (they sum to it)."""
    w = round(backward_ps * W_SHARE_OF_BACKWARD) if has_params else 0
    return backward_ps - w, w
