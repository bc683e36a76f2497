"""Reading Chakra ET files: the per-rank files of a job, their messages, node attrs, communicator groups.

Used by :mod:`.chakra`, which merges the per-rank DAGs into netsim's graph.
"""
from __future__ import annotations

import glob
import json
import os
import re

from ..errors import InputError
from .chakra_schema import GlobalMetadata, Node
from .etstream import split_messages


def trace_files(path: str) -> list[str]:
    """Per-rank files of a folder or a prefix (``DIR/NAME`` → ``DIR/NAME.<rank>.et``), rank order."""
    pattern = os.path.join(path, "*.et") if os.path.isdir(path) else glob.escape(path) + ".*.et"
    found = {}
    for f in glob.glob(pattern):
        m = re.search(r"\.(\d+)\.et$", f)
        if m:
            found.setdefault(int(m.group(1)), f)
    if not found:
        raise InputError("no Chakra ET files", source=path, where="path", value=pattern,
                         accepted="a folder or prefix of per-rank NAME.<rank>.et files")
    ranks = sorted(found)
    if ranks != list(range(len(ranks))):
        missing = sorted(set(range(ranks[-1] + 1)) - set(ranks))
        raise InputError("ranks missing", source=path, where="per-rank files", value=missing,
                         accepted="NAME.0.et … NAME.<n-1>.et, one per rank")
    return [found[r] for r in ranks]


def read_et(path: str) -> tuple:
    """(GlobalMetadata, [Node, …]) of one ET file."""
    with open(path, "rb") as f:
        msgs = split_messages(f.read(), path)
    if not msgs:
        raise InputError("empty trace", source=path, where="GlobalMetadata", value=0,
                         accepted="GlobalMetadata then Node messages")
    try:
        meta = GlobalMetadata.FromString(msgs[0])
        nodes = [Node.FromString(m) for m in msgs[1:]]
    except Exception as exc:  # protobuf's DecodeError
        raise InputError(f"not a Chakra protobuf message ({exc})", source=path, where="stream",
                         value=None, accepted="Chakra ET (et_def.proto)") from None
    return meta, nodes


def attrs(node) -> dict:
    """A node's ``attr`` list as {name: value} (lists as Python lists)."""
    out = {}
    for a in node.attr:
        which = a.WhichOneof("value")
        if which is None:
            continue
        v = getattr(a, which)
        out[a.name] = list(v.values) if which.endswith("_list") else v
    return out


def load_groups(path: str | None, world: int) -> dict[str, tuple]:
    """Communicator groups: ``{"pg_name": [ranks…]}`` (ASTRA-sim's JSON), validated."""
    if path is None:
        return {}
    try:
        with open(path) as f:
            raw = json.load(f)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read communicator groups ({exc})", source=path, where="file", value=None,
                         accepted='JSON {"<pg_name>": [rank, …]}') from None
    if not isinstance(raw, dict):
        raise InputError("not a JSON object", source=path, where="top level", value=type(raw).__name__,
                         accepted='{"<pg_name>": [rank, …]}')
    out = {}
    for k, v in raw.items():
        if (not isinstance(v, list) or not v or len(set(v)) != len(v)
                or not all(isinstance(r, int) and 0 <= r < world for r in v)):
            raise InputError("bad rank list", source=path, where=f"group {k!r}", value=v,
                             accepted=f"distinct ranks 0..{world - 1}")
        out[str(k)] = tuple(v)
    return out
