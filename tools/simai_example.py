"""SimAI's 9,216-GPU MoE example workload, regenerated from its row structure.

``example/workload_analytical.txt`` of aliyun/SimAI @ 03613a7 (140,399 bytes):
an AICB-written ``HYBRID_TRANSFORMER_FWD_IN_BCKWD`` file, tp 2, ep 16, pp 12,
vpp 8, ga 24, ``pp_comm`` 251,658,240 bytes, 1,789 rows — 6 head rows
(the optimizer's gradient collectives), ``ga`` = 24 micro-batch blocks of
``embedding_layer`` + 8 transformer layers of 9 rows (``attention_column``,
``attention_row``, 7 ``mlp_moelayer`` rows: expert all-gathers, all-to-alls
on all ranks and on the expert group) + ``final_column``, and 7 tail rows
(``cross_entropy1..3``, ``optimizer1..4``).  Only the first block's
``embedding_layer`` differs (its wg compute is 15,091,072 ns, the others
875,420).  The field values below are the file's; the layout (tabs, ``\\n``)
is AICB's, so the output is the file byte for byte in length.

``python -m tools.simai_example OUT [--all-gpus N] [--ep E]`` writes it, or a
cut of it on N GPUs (the same rows, a smaller ``all_gpus``; ``--ep`` when 16
does not divide N / (tp · pp)).
"""
from __future__ import annotations

import argparse
import sys

HEADER = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: {ep} pp: 12 vpp: 8 ga: 24 "
          "all_gpus: {gpus} checkpoints: 0 checkpoint_initiates: 0 pp_comm 251658240")
HEAD = (("grad_gather", 1, "NONE", 0, 1, "NONE", 0, 1, "ALLGATHER", 2807758848),
        ("grad_param_comm", 1, "NONE", 0, 1, "NONE", 0, 1, "REDUCESCATTER", 5615517696),
        ("grad_param_compute", 1, "NONE", 0, 29700224, "NONE", 0, 1, "NONE", 0),
        ("embedding_grads", 1, "NONE", 0, 1, "ALLREDUCE", 50331648, 1, "NONE", 0),
        ("moe_grad_norm1", 1, "NONE", 0, 1, "NONE", 0, 1, "ALLGATHER_DP_EP", 19327352832),
        ("moe_grad_norm2", 1, "NONE", 0, 1, "NONE", 0, 1, "REDUCESCATTER_DP_EP", 38654705664))
ATTENTION = (("attention_column", 1750840, "ALLGATHER", 50331648, 875420, "REDUCESCATTER", 0, 875420, "NONE", 0),
             ("attention_row", 1750840, "REDUCESCATTER", 50331648, 875420, "ALLGATHER", 50331648, 875420, "NONE", 0))
MOE = (("mlp_moelayer", 7956367, "ALLGATHER", 1572864, 7956367, "ALLGATHER", 1572864, 1, "NONE", 0),
       ("mlp_moelayer", 1, "ALLTOALL", 25165824, 1, "ALLTOALL", 25165824, 1, "NONE", 0),
       ("mlp_moelayer", 1, "ALLTOALL_EP", 100663296, 1, "ALLTOALL_EP", 100663296, 1, "NONE", 0),
       ("mlp_moelayer", 1, "ALLGATHER", 201326592, 1, "REDUCESCATTER", 201326592, 1, "NONE", 0),
       ("mlp_moelayer", 1, "REDUCESCATTER", 201326592, 1, "ALLGATHER", 201326592, 1, "NONE", 0),
       ("mlp_moelayer", 1, "ALLTOALL_EP", 100663296, 1, "ALLTOALL_EP", 100663296, 1, "NONE", 0),
       ("mlp_moelayer", 1, "ALLTOALL", 25165824, 1, "ALLTOALL", 25165824, 1, "NONE", 0))
FINAL = ("final_column", 875420, "ALLGATHER", 50331648, 875420, "REDUCESCATTER", 0, 875420, "NONE", 0)
TAIL = tuple((f"cross_entropy{k}", 0, "ALLREDUCE", 16384, 0, "NONE", 0, 0, "NONE", 0) for k in (1, 2, 3)) + \
    tuple((f"optimizer{k}", 0, "ALLREDUCE", 4, 0, "NONE", 0, 0, "NONE", 0) for k in (1, 2, 3, 4))
GA, LAYERS, UPDATE_NS = 24, 8, 100
FIRST_EMBEDDING_WG_NS, EMBEDDING_WG_NS = 15091072, 875420


def rows() -> list[tuple]:
    """The file's 1,789 rows (name then the 10 fields between ``depen`` and ``update``)."""
    out = list(HEAD)
    for block in range(GA):
        wg = FIRST_EMBEDDING_WG_NS if block == 0 else EMBEDDING_WG_NS
        out.append(("embedding_layer", 622731, "ALLREDUCE", 50331648, 1, "NONE", 0, wg, "NONE", 0))
        for _ in range(LAYERS):
            out.extend(ATTENTION + MOE)
        out.append(FINAL)
    return out + list(TAIL)


def text(all_gpus: int = 9216, ep: int = 16) -> str:
    """The workload file (``all_gpus``, ``ep`` as given; 9,216 and 16 are SimAI's)."""
    body = rows()
    lines = [HEADER.format(ep=ep, gpus=all_gpus), str(len(body))]
    lines += ["\t".join([r[0], "-1"] + [str(v) for v in r[1:]] + [str(UPDATE_NS)]) for r in body]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.simai_example", description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--all-gpus", type=int, default=9216)
    ap.add_argument("--ep", type=int, default=16)
    a = ap.parse_args(argv)
    if a.all_gpus < 24 or a.all_gpus % 24 or a.ep < 1 or (a.all_gpus // 24) % a.ep:
        print(f"simai_example: --all-gpus {a.all_gpus} / --ep {a.ep}: accepted: all_gpus a multiple of "
              "tp·pp = 24 whose dp = all_gpus/24 is a multiple of ep", file=sys.stderr)
        return 2
    with open(a.out, "w", encoding="utf-8", newline="") as f:
        f.write(text(a.all_gpus, a.ep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
