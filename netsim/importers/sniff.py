"""Recognising another tool's workload from its path or first bytes: Chakra, SimAI, AICB CSV.

:func:`netsim.importers.detect_format` asks these of every workload ``netsim
run`` is given, so they live apart from the importers they stand for: a
netsim YAML workload is told apart without importing them. Each reads at most
a few KiB. Left out: validating the file (the importer does, with file, line
and field).
"""
from __future__ import annotations

import os
import re

#: SimAI parallelism policies the importer runs (:mod:`.simai`)
SIMAI_POLICIES = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER", "MICRO", "DATA")
#: further first tokens of a SimAI file: recognised, then refused by the importer with the accepted policies
SIMAI_OTHER_POLICIES = ("MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_DLRM", "HYBRID_DLRM_ENHANCED",
                        "HYBRID_CUSTOMIZED", "DISTRIBUTED_INFERENCE")

#: AICB's physical model workloads open with the ranks the file was generated for, e.g. ``[rank0 ~ rank127]``
_RANKS_LINE = re.compile(r"\[\s*rank(\d+)\s*~\s*rank(\d+)\s*\]")


def looks_chakra(path: str) -> bool:
    """A folder holding ``*.et`` files, an ``.et`` file, or the prefix of ``PREFIX.<rank>.et`` files."""
    import glob
    if os.path.isdir(path):
        return bool(glob.glob(os.path.join(path, "*.et")))
    return path.endswith(".et") or bool(glob.glob(glob.escape(path) + ".*.et"))


def looks_simai(path: str) -> bool:
    """First token of the file is a SimAI parallelism policy."""
    try:
        with open(path, "rb") as f:
            head = f.read(256).decode("utf-8", "replace").lstrip("\ufeff").split()
    except OSError:
        return False
    return bool(head) and head[0] in SIMAI_POLICIES + SIMAI_OTHER_POLICIES


def split_ranks_line(text: str) -> tuple[str, int | None]:
    """(the CSV text, the world size of a leading ``[rank0 ~ rankN]`` line or ``None``)."""
    first, _, rest = text.partition("\n")
    m = _RANKS_LINE.fullmatch(first.strip())
    if m is None:
        return text, None
    return rest, int(m.group(2)) - int(m.group(1)) + 1


def looks_aicb_csv(path: str) -> bool:
    """The header (after an optional ``[rank0 ~ rankN]`` line) starts ``comm_type,comm_group`` and has msg_size."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096).lstrip("\ufeff")
    except OSError:
        return False
    cols = [c.strip() for c in split_ranks_line(head)[0].partition("\n")[0].split(",")]
    return cols[:2] == ["comm_type", "comm_group"] and "msg_size" in cols
