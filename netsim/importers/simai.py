"""SimAI / AICB workload ``.txt`` → an :class:`ImportedJob`.

The format, as SimAI's parser (``astra-sim-alibabacloud/.../Workload.cc``,
``initialize_workload``) reads it: line 1 a header — the parallelism policy
then ``key: value`` pairs (``model_parallel_NPU_group`` = TP size, ``ep``,
``pp``, ``vpp``, ``ga``, ``all_gpus``, ``checkpoints: N l1 … lN``,
``checkpoint_initiates: N …``, ``pp_comm`` or ``pp_comm:`` bytes); line 2
the row count; then whitespace-separated rows of 12 fields ``name depen
fwd_compute FWD_COMM fwd_bytes ig_compute IG_COMM ig_bytes wg_compute
WG_COMM wg_bytes update`` (SimAI reads tokens with ``>>``: tabs, spaces, CRLF
and line breaks inside a row are all the same to it, and to us).

Units: compute times are SimAI ``Tick``s, 1 ns each (``CLOCK_PERIOD 1`` in
``system/Common.hh``; events are scheduled with ``time_res = NS``) — not µs,
whatever the docs say.  Sizes are bytes, the nccl-tests size netsim uses.

Mapping (``HYBRID_TRANSFORMER`` and ``HYBRID_TRANSFORMER_FWD_IN_BCKWD``; ranks
Megatron-ordered, TP fastest, then DP, then PP, as SimAI's ``MockNcclGroup``):
every rank runs every row, forward in file order, then backward in reverse
order.  A row's fwd and ig collectives run on its TP group and block the
rank's compute; its wg collective runs on its DP group, on a DP stream
(non-blocking, in order); ``_EP`` puts a collective on the expert group (EP
consecutive members of a DP group), ``_DP_EP`` on the expert-data-parallel
group.  ``update`` is a delay after each of the row's collectives (SimAI's
``Layer`` counts fwd, ig and wg collectives finished that long after their
last byte; an ``optimizer`` op on each member).  AICB already writes the layer
block ``ga`` times: ``ga`` is only used to find micro-batch boundaries, never
to repeat rows.  Pipeline (``pp`` > 1; SimAI adds a closed form over
``pp_comm``): Megatron's 1F1B, or interleaved 1F1B with ``vpp`` model chunks,
on explicit ``pp_comm`` transfers (:mod:`.simai_pipeline`).  ``MICRO``: every
row's wg collective on all ranks, one after another, no compute (SimAI itself
issues only the first row).  ``DATA``: pure data parallelism on all ranks
(TP = PP = 1): fwd and ig slots carry no communication (SimAI involves no
dimension for them), wg collectives on all ranks.  Left out: recomputation as a separate pass
(SimAI's parser never marks a layer as initiating it — ``checkpoint_initiates``
fills its ``checkpoints`` map — and AICB folds recomputation into
``fwd_compute`` instead: ``checkpoints`` are parsed and reported only),
``ALLREDUCEALLTOALL`` and ``HYBRID_*`` policies other
than the two above (errors).
"""
from __future__ import annotations

import re

from ..errors import InputError
from ..values import MAX_EXACT, MAX_OP_NS
from .sniff import SIMAI_POLICIES as POLICIES, looks_simai  # noqa: F401 (looks_simai: re-exported)

_COLLS = {"ALLREDUCE": "allreduce", "ALLGATHER": "allgather", "REDUCESCATTER": "reducescatter",
          "ALLTOALL": "alltoall"}
_INT_KEYS = {"model_parallel_NPU_group:": "tp", "ep:": "ep", "pp:": "pp", "vpp:": "vpp", "ga:": "ga",
             "all_gpus:": "all_gpus", "pp_comm": "pp_comm", "pp_comm:": "pp_comm"}
FIELDS = ("name", "depen", "fwd_compute", "fwd_comm", "fwd_bytes", "ig_compute", "ig_comm", "ig_bytes",
          "wg_compute", "wg_comm", "wg_bytes", "update")


def _int(tok: str, path: str, where: str, minimum: int = 0, maximum: int | None = None,
         unit: str = "") -> int:
    if re.fullmatch(r"[+-]?\d+\.0*", tok):          # AICB writes pp_comm as a float under sequence parallelism
        tok = tok.split(".")[0]
    if not re.fullmatch(r"[+-]?\d+", tok) or int(tok) < minimum:
        raise InputError("not an integer" + (f" >= {minimum}" if minimum else ""), source=path, where=where,
                         value=tok, accepted=f"an integer >= {minimum}")
    if maximum is not None and int(tok) > maximum:
        raise InputError("out of range", source=path, where=where, value=tok,
                         accepted=f"an integer from {minimum} to {maximum}{unit}")
    return int(tok)


def _field_max(key: str) -> tuple[int | None, str]:
    """Upper bound and its unit note of row field ``key``: netsim's size and op-duration bounds."""
    if key.endswith("_bytes"):
        return MAX_EXACT, " (2^53 bytes)"
    if key.endswith("_compute") or key == "update":
        return MAX_OP_NS, " ns (one day)"
    return None, ""


def parse_header(tokens: list[str], path: str) -> dict:
    """The header's fields: policy, tp, ep, pp, vpp, ga, all_gpus, pp_comm, checkpoints, checkpoint_initiates."""
    if not tokens or tokens[0] not in POLICIES:
        raise InputError("parallelism policy netsim cannot import", source=path, where="line 1, field policy",
                         value=tokens[0] if tokens else "", accepted=", ".join(POLICIES))
    h = {"policy": tokens[0], "tp": 1, "ep": 1, "pp": 1, "vpp": 1, "ga": 1, "all_gpus": None, "pp_comm": 0,
         "checkpoints": [], "checkpoint_initiates": []}
    i = 1
    while i < len(tokens):
        key = tokens[i]
        if key in _INT_KEYS or key in ("checkpoints:", "checkpoint_initiates:"):
            if i + 1 >= len(tokens):
                raise InputError("key without a value", source=path, where=f"line 1, field {key}", value=key,
                                 accepted=f"{key} <integer>")
            if key in _INT_KEYS:
                h[_INT_KEYS[key]] = _int(tokens[i + 1], path, f"line 1, field {key}",
                                         0 if key.startswith("pp_comm") else 1)
                i += 2
                continue
            n = _int(tokens[i + 1], path, f"line 1, field {key}")
            layers = [_int(t, path, f"line 1, field {key}") for t in tokens[i + 2:i + 2 + n]]
            if len(layers) != n:
                raise InputError(f"{n} layers announced, {len(layers)} given", source=path,
                                 where=f"line 1, field {key}", value=n, accepted="N then N layer indices")
            h[key.rstrip(":")] = layers
            i += 2 + n
            continue
        i += 1      # SimAI ignores unknown tokens in the header; so do we (reported below)
    return h


def parse_rows(text: str, path: str):
    """(header dict, [row dict with 'line'], notes) of a SimAI workload file's text."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    header = parse_header(lines[0].split(), path) if lines else parse_header([], path)
    known = set(_INT_KEYS) | {"checkpoints:", "checkpoint_initiates:"}
    notes = [f"header token {t!r} ignored (as SimAI does)" for t in lines[0].split()[1:]
             if not re.fullmatch(r"\d+", t) and t not in known]
    toks = [(t, n) for n, ln in enumerate(lines[1:], start=2) for t in ln.split()]
    if not toks:
        raise InputError("missing row count", source=path, where="line 2", value="", accepted="an integer")
    count = _int(toks[0][0], path, f"line {toks[0][1]}, row count", 1)
    body = toks[1:]
    if len(body) < 12 * count:
        at = body[-1][1] if body else toks[0][1]
        raise InputError(f"{count} rows of 12 fields announced, {len(body)} fields found", source=path,
                         where=f"line {at}", value=len(body), accepted=f"{12 * count} fields ({', '.join(FIELDS)})")
    if len(body) > 12 * count:
        t, n = body[12 * count]
        raise InputError(f"text after the {count} announced rows", source=path, where=f"line {n}", value=t,
                         accepted="exactly the announced number of 12-field rows")
    rows = []
    for k in range(count):
        f = body[12 * k:12 * k + 12]
        line = f[0][1]
        row = {"name": f[0][0], "line": line}
        for j, key in enumerate(FIELDS[1:], start=1):
            tok, n = f[j]
            where = f"line {n}, field {key}"
            if key.endswith("_comm"):
                row[key] = _comm_type(tok, path, where)
            elif key == "depen":
                row[key] = _int(tok, path, where, -(10**9))
            else:
                row[key] = _int(tok, path, where, 0, *_field_max(key))
        rows.append(row)
    return header, rows, notes


def _comm_type(tok: str, path: str, where: str):
    """(collective, group kind suffix) of e.g. ``ALLGATHER_DP_EP``; ``None`` for ``NONE``."""
    if tok == "NONE":
        return None
    m = re.fullmatch(r"(ALLREDUCE|ALLGATHER|REDUCESCATTER|ALLTOALL)(_EP|_DP_EP)?", tok)
    if not m:
        raise InputError("communication type netsim cannot model", source=path, where=where, value=tok,
                         accepted="NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, each optionally _EP or _DP_EP")
    return _COLLS[m.group(1)], (m.group(2) or "").lstrip("_").lower()


def load_simai(path: str, *, world: int | None = None, gpu_map=None, vpp: int | None = None):
    """Import a SimAI/AICB workload file; ``world`` = the topology's GPU count (used without ``all_gpus``).

    ``vpp``: model chunks per pipeline stage instead of the header's (AICB writes its layer count there).
    """
    from .simai_build import make_job
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", source=path, where="file", value=None,
                         accepted="a SimAI workload text file") from None
    header, rows, notes = parse_rows(text, path)
    if vpp is not None:
        notes.append(f"vpp = {vpp} from --workload-set (the file says {header['vpp']})")
        header["vpp"] = vpp
    return make_job(path, header, rows, notes, world, gpu_map=gpu_map)
