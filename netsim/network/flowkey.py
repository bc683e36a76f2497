"""The ECMP key of a flow: one function, the same on every backend.

A flow's equal-cost path is :meth:`netsim.topology.Router.path` ``(src, dst,
key, seed)``. The key must not depend on anything a backend decides, or the
same workload takes different paths on different backends (the flow id is
given out in send order, which follows completion order, which differs by
nanoseconds between backends). :class:`FlowKeys` derives it from what the
workload says about the flow:

* ``src``, ``dst`` and every field of its :class:`~netsim.records.FlowTag`
  (``job``, ``iteration``, ``op``, ``group``, ``collective``, ``step``,
  ``group_kind``, ``tag``), joined with the ASCII unit separator;
* an **occurrence counter** ``n``: how many flows with the same text were
  sent before this one. Repeats come from chunks of one collective step on
  one pair (the engine's connections send them in order), so the n-th
  repeat is the same flow on every backend.

The key is the CRC-32 of the text (``n = 0``) or of the text, the separator
and ``#n`` (``n >= 1``): a 32-bit integer. A flow of a flow file (``netsim
flows``: its tag's ``row`` is set) is keyed by its row instead (from 0; for a
file in start order that is its flow id, so its paths are those of the
releases that hashed flow ids). Either way the key is written to ``fct.csv`` as
``path_key`` so that analysis re-derives the path the backend used. Local
copies (``src == dst``) are not routed and get no key (:data:`NO_KEY`).

Memory: one dict entry (a 64-bit digest of the text and a count) per
distinct text, i.e. per flow of a workload without repeats (about 90 bytes
each, measured with tracemalloc; so about 0.3 GB for the 3.2 M flows of the
1,024-GPU GPT step). Left out: per-connection keys (NCCL gives each channel's queue pair
its own UDP source port, so all chunks of one channel share a path; the tag
does not name the channel, so repeats are spread by ``n`` instead).

>>> from netsim.records import FlowTag
>>> keys = FlowKeys()
>>> t = FlowTag(tag="w", iteration=0, op="dp0.allreduce", step=3)
>>> a, b = keys.key("g0", "g1", t), keys.key("g0", "g1", t)
>>> a == flow_key("g0", "g1", t) and b == flow_key("g0", "g1", t, 1) and a != b
True
"""
from __future__ import annotations

import zlib

from ..records import FlowTag

#: ``path_key`` of a flow that is not routed (a local copy), and of rows written before keys existed
NO_KEY = -1
_SEP = "\x1f"       # ASCII unit separator: not in node, op or group names
_TAG_CACHE = 4096   # tags whose text is kept (a collective step's flows share one tag object)


def flow_text(src: str, dst: str, tag: FlowTag) -> str:
    """What the key of a flow from ``src`` to ``dst`` caused by ``tag`` is computed from."""
    return f"{src}\x1f{dst}\x1f{_tag_text(tag)}"


def _tag_text(tag: FlowTag) -> str:
    return (f"{tag.job}\x1f{tag.iteration}\x1f{tag.op}\x1f{tag.group}\x1f"
            f"{tag.collective}\x1f{tag.step}\x1f{tag.group_kind}\x1f{tag.tag}")


def flow_key(src: str, dst: str, tag: FlowTag, occurrence: int = 0) -> int:
    """The ECMP key (CRC-32, 0 .. 2**32 - 1) of the ``occurrence``-th flow (from 0) with this text."""
    text = flow_text(src, dst, tag)
    return _key(text.encode(), text, occurrence)


def _key(raw: bytes, text: str, n: int) -> int:
    return zlib.crc32(raw) if n == 0 else zlib.crc32(f"{text}{_SEP}#{n}".encode())


def route_key(path_key: int, flow_id: int) -> int:
    """The key to route a recorded flow (an ``fct.csv`` row) with: its ``path_key``, or for
    a row without one (``-1``: written before path keys existed, when every backend hashed
    the flow id) its ``flow_id``.

    >>> route_key(123, 7), route_key(NO_KEY, 7)
    (123, 7)
    """
    return path_key if path_key >= 0 else flow_id


class FlowKeys:
    """The occurrence counters of one run; :meth:`key` gives each sent flow its ECMP key.

    Every backend owns one and calls :meth:`key` once per routed flow, in
    send order.
    """

    __slots__ = ("_seen", "_tags")

    def __init__(self):
        self._seen: dict[int, int] = {}     # 64-bit digest of a flow text -> flows sent with it
        self._tags: dict[int, tuple] = {}   # id(tag) -> (tag, its text's bytes): a step's flows share one tag

    def key(self, src: str, dst: str, tag: FlowTag) -> int:
        """The key of the next flow from ``src`` to ``dst`` with ``tag`` (counts it; a flow-file row: its row)."""
        if tag.row >= 0:
            return tag.row
        tags = self._tags
        ent = tags.get(id(tag))
        if ent is None or ent[0] is not tag:
            if len(tags) >= _TAG_CACHE:
                tags.clear()
            ent = tags[id(tag)] = (tag, _tag_text(tag).encode())
        tb = ent[1]
        pb = f"{src}\x1f{dst}\x1f".encode()
        crc = zlib.crc32(tb, zlib.crc32(pb))         # = crc32 of the whole text (pb + tb)
        digest = crc << 32 | zlib.adler32(tb, zlib.adler32(pb))
        seen = self._seen
        n = seen.get(digest, 0)
        seen[digest] = n + 1
        if n == 0:
            return crc
        raw = pb + tb
        return _key(raw, raw.decode(), n)

    def __len__(self) -> int:
        """Distinct flow texts seen."""
        return len(self._seen)
