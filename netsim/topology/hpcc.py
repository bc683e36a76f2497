"""HPCC/ns-3 text files as HPCC ships them: ``topology.txt`` and the declared-count rule of ``flow.txt``.

HPCC's ns-3 (``simulation/scratch/third.cc``) reads a count from the header
and then exactly that many records; whatever follows is never read. The files
in HPCC's ``simulation/mix`` folder rely on that: ``topology.txt`` declares 65
links, then holds 256 link lines and a help text; ``flow.txt`` declares 2
flows, then holds 256 flow lines and a help text. This module reads them the
same way:

* exactly the declared number of records is read; the lines after them are
  ignored and one ``netsim: note:`` line on stderr says how many (once per
  file and process; the CLI prints it when the command succeeds, so that a
  failing command still prints one line);
* a file with fewer records than declared is an error that says how many were
  found; when the count found is a prefix of the declared one (``813`` under
  ``8138``) it names the likely cause: HPCC's ``traffic_gen.py`` writes an
  estimated flow count first and overwrites it in place with the real count
  without padding, so a shorter real count leaves the estimate's last digits;
* numbers are ASCII digits only (``str.isdigit`` also accepts superscripts
  such as ``¹``, which ``int`` rejects), and the declared node count is
  bounded by what the links can join before anything is allocated.

Left out: ns-3's token-stream reading across line breaks (a record is one
line here), and the topology extensions beyond ``src dst rate delay
error_rate``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import TopologyError, hold_notes, note, release_notes  # noqa: F401 (notes: re-exported)
from ..units import UnitError, parse_rate, parse_time_exact_ns

_ASCII_INT = re.compile(r"[0-9]+")
_ERROR_RATE = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: fields of one HPCC link line: src dst rate delay [error_rate] (HPCC ships all five)
LINK_FIELDS = "'src dst rate delay error_rate', e.g. 0 320 100Gbps 1000ns 0.000000"


def ascii_int(text: str) -> int | None:
    """``text`` as a non-negative integer when it is ASCII digits only, else None.

    >>> ascii_int("42"), ascii_int("\u00b9"), ascii_int("-1"), ascii_int("4_2")
    (42, None, None, None)
    """
    return int(text) if isinstance(text, str) and _ASCII_INT.fullmatch(text) else None


@dataclass(frozen=True)
class Declared:
    """What a header declares: ``count`` records of kind ``what`` (plural), on line ``line``."""

    count: int
    what: str
    line: int
    field: str


def take_declared(records: list[tuple[int, str]], declared: Declared, source: str,
                  looks_like: Callable[[list[str]], bool], error: type = TopologyError) -> list[tuple[int, str]]:
    """The first ``declared.count`` of ``records`` (numbered non-blank lines); a note for the rest.

    Raises ``error`` (:class:`TopologyError` by default) when fewer lines than
    declared look like a record (``looks_like`` of the split line), saying how
    many were found.
    """
    n = declared.count
    found = 0
    for _, text in records:
        if not looks_like(text.split()):
            break
        found += 1
    if found < n:
        cause = ""
        if found and str(n).startswith(str(found)):
            cause = (f"; likely cause: HPCC's traffic_gen.py writes its estimated count first and overwrites it "
                     f"in place without padding, so a real count {found} over an estimate {n} leaves {n}: "
                     f"set line {declared.line} to {found}")
        if not cause and found < len(records):   # a malformed record cut the count short: name its line
            ln, text = records[found]
            cause = f"; line {ln} is not one of them (got '{text.strip()[:60]}')"
        raise error(f"declares {n} {declared.what} but the file holds {found}",
                    source=source, where=f"line {declared.line}, field {declared.field}",
                    accepted=f"a count <= {found} (the {declared.what} that follow){cause}")
    taken, rest = records[:n], records[n:]
    if rest:
        extra = sum(1 for _, text in rest if looks_like(text.split()))
        what = f"{extra} more {declared.what} and {len(rest) - extra} other lines" if extra else "text"
        last = taken[-1][0] if taken else declared.line
        note(f"{source}: read the {n} {declared.what} line {declared.line} declares, as ns-3 does; "
             f"ignored {len(rest)} non-blank lines after line {last} ({what})")
    return taken


def _looks_like_link(cols: list[str]) -> bool:
    # any Unicode digit counts here, so that a record with a superscript is reported at its field
    return len(cols) >= 2 and cols[0].isdigit() and cols[1].isdigit()


def _header(lines, path: str) -> tuple[int, int, int]:
    ln, text = lines[0]
    head = text.split()
    vals = [ascii_int(x) for x in head]
    if len(head) != 3 or None in vals:
        raise TopologyError("bad header", source=path, where=f"line {ln}", value=text.strip(),
                            accepted="three non-negative integers 'nodes switches links' in ASCII digits")
    n_nodes, n_sw, n_links = vals
    if n_sw > n_nodes:
        raise TopologyError(f"more switches than the {n_nodes} nodes", source=path, where=f"line {ln}, field switches",
                            value=n_sw, accepted=f"at most {n_nodes}")
    return n_nodes, n_sw, n_links


def _link_attrs(cols: list[str], path: str, ln: int) -> dict[str, Any]:
    attrs: dict[str, Any] = {"kind": "ethernet"}
    for field, parser, col in (("rate", parse_rate, cols[2]), ("delay", parse_time_exact_ns, cols[3])):
        try:
            attrs[f"{field}_{'bps' if field == 'rate' else 'ns'}"] = parser(col)
        except UnitError:
            raise TopologyError(f"bad {field}", source=path, where=f"line {ln}, field {field}", value=col,
                                accepted="a rate such as 100Gbps" if field == "rate"
                                else "a time such as 1000ns or 0.001ms") from None
    if len(cols) == 5:
        er = float(cols[4]) if _ERROR_RATE.fullmatch(cols[4]) else float("nan")
        if not 0.0 <= er < 1.0:
            raise TopologyError("bad error_rate", source=path, where=f"line {ln}, field error_rate",
                                value=cols[4], accepted="a loss probability in [0, 1) such as 0.000000")
        if er > 0:
            attrs["error_rate"] = er
    return attrs


def _switch_ids(lines, n_nodes: int, n_sw: int, path: str) -> list[int]:
    """The ``n_sw`` switch ids of the line after the header (none when ``n_sw`` is 0)."""
    if not n_sw:
        return []
    ln, text = lines[1] if len(lines) > 1 else (lines[0][0] + 1, "")
    cols = text.split()
    if len(cols) != n_sw:
        raise TopologyError(f"expected {n_sw} switch ids", source=path, where=f"line {ln}", value=text.strip(),
                            accepted=f"the {n_sw} switch ids line 1 declares, on one line")
    ids = []
    for s in cols:
        k = ascii_int(s)
        if k is None or k >= n_nodes:
            raise TopologyError("bad switch id", source=path, where=f"line {ln}", value=s,
                                accepted=f"an integer in 0..{n_nodes - 1} (ASCII digits)")
        ids.append(k)
    return ids


def read_hpcc_topology(path: str) -> nx.Graph:
    """Read an HPCC/ns-3 ``topology.txt``; nodes ``"0".."N-1"``, switches kind switch, the rest host.

    Line 1 is ``nodes switches links``, line 2 the switch ids (absent when
    there are none), then exactly ``links`` link lines; what follows them
    (HPCC ships a help text there) is ignored with a note on stderr. A file
    with no switch gets ``host_forwarding`` (routes transit hosts, as every
    ns-3 node forwards; :func:`netsim.topology.routing.relay_kinds`).
    """
    import networkx as nx          # here, not at import: the CLI imports this module for its notes
    from .schema import validate
    with open(path, encoding="utf-8-sig") as fh:
        lines = [(i + 1, ln) for i, ln in enumerate(fh) if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise TopologyError("empty topology file", source=path,
                            accepted="HPCC topology.txt: 'nodes switches links', switch ids, then links")
    n_nodes, n_sw, n_links = _header(lines, path)
    sw_ids = _switch_ids(lines, n_nodes, n_sw, path)    # before the links: a missing line is named as such
    links = take_declared(lines[2:] if n_sw else lines[1:], Declared(n_links, "links", lines[0][0], "links"),
                          path, _looks_like_link)
    if n_nodes > 2 * n_links:  # bound the allocation by what the file holds
        raise TopologyError(f"declares {n_nodes} nodes but its {n_links} links join at most {2 * n_links}",
                            source=path, where=f"line {lines[0][0]}, field nodes",
                            accepted=f"at most 2 x links = {2 * n_links} (every node on a link)")
    base = os.path.basename(path)
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    # "hpcc_small/topology.txt" is named after its folder (HPCC keeps one topology.txt per experiment)
    g = nx.Graph(name=f"{parent}/{base}" if base == "topology.txt" and parent else base)
    for i in range(n_nodes):
        g.add_node(str(i), kind="host")
    for k in sw_ids:
        g.nodes[str(k)]["kind"] = "switch"
    for ln, text in links:
        cols = text.split()
        if len(cols) not in (4, 5):
            raise TopologyError("bad link line", source=path, where=f"line {ln}", value=text.strip(),
                                accepted=LINK_FIELDS)
        ends = []
        for field, end in (("src", cols[0]), ("dst", cols[1])):
            k = ascii_int(end)
            if k is None or k >= n_nodes:
                raise TopologyError("unknown node", source=path, where=f"line {ln}, field {field}", value=end,
                                    accepted=f"a node index in 0..{n_nodes - 1} (ASCII digits)")
            ends.append(str(k))
        u, v = ends
        attrs = _link_attrs(cols, path, ln)
        if g.has_edge(u, v):
            raise TopologyError("duplicate link", source=path, where=f"line {ln}", value=f"{u} {v}",
                                accepted="one link per node pair")
        g.add_edge(u, v, **attrs)
    if not n_sw:
        # no switch: ns-3 routes through its nodes (every ns-3 node forwards), as ASTRA-sim's ns-3 host rings
        g.graph["host_forwarding"] = True
    return validate(g, source=path)


@dataclass(frozen=True)
class FatTreeLayout:
    """HPCC's ``simulation/mix/fat.txt`` layout (the fat tree of the paper's §5.1 evaluation).

    Defaults reproduce the file HPCC ships byte for byte: 320 servers, 20 ToRs
    of 16 servers at 100 Gb/s, 5 pods of 4 ToRs and 4 aggregation switches
    (every ToR to every aggregation switch of its pod at 400 Gb/s), 16 core
    switches in 4 groups; aggregation switch ``j`` of every pod connects to the
    4 cores of group ``j`` at 400 Gb/s. Every link 1 µs, error rate 0.
    Node ids as in the file: servers ``0..319``, ToRs ``320..339``,
    aggregation ``340..359``, cores ``360..375``.
    """

    pods: int = 5               #: pods (ToR + aggregation groups)
    tors_per_pod: int = 4       #: ToRs per pod
    hosts_per_tor: int = 16     #: servers per ToR
    aggs_per_pod: int = 4       #: aggregation switches per pod (= core groups)
    cores_per_agg: int = 4      #: core switches each aggregation switch connects to (one core group)
    host_rate: str = "100Gbps"  #: server-ToR links
    fabric_rate: str = "400Gbps"  #: ToR-aggregation and aggregation-core links
    delay: str = "1000ns"       #: every link's propagation delay


def hpcc_fat_tree_text(layout: FatTreeLayout = FatTreeLayout()) -> str:
    """HPCC ``topology.txt`` text of ``layout`` (the default: HPCC's ``mix/fat.txt`` exactly).

    >>> hpcc_fat_tree_text().splitlines()[0]
    '376 56 480'
    """
    lo = layout
    n_tor = lo.pods * lo.tors_per_pod
    n_host = n_tor * lo.hosts_per_tor
    n_agg = lo.pods * lo.aggs_per_pod
    n_core = lo.aggs_per_pod * lo.cores_per_agg
    tor0, agg0 = n_host, n_host + n_tor
    core0 = agg0 + n_agg
    links = [(h, tor0 + h // lo.hosts_per_tor, lo.host_rate) for h in range(n_host)]
    for t in range(n_tor):
        pod = t // lo.tors_per_pod
        links += [(tor0 + t, agg0 + pod * lo.aggs_per_pod + j, lo.fabric_rate) for j in range(lo.aggs_per_pod)]
    for a in range(n_agg):
        j = a % lo.aggs_per_pod
        links += [(agg0 + a, core0 + j * lo.cores_per_agg + c, lo.fabric_rate) for c in range(lo.cores_per_agg)]
    n_sw = n_tor + n_agg + n_core
    head = [f"{n_host + n_sw} {n_sw} {len(links)}", " ".join(str(i) for i in range(n_host, n_host + n_sw))]
    return "\n".join(head + [f"{u} {v} {r} {lo.delay} 0.000000" for u, v, r in links]) + "\n\n"


def hpcc_fat_tree(layout: FatTreeLayout = FatTreeLayout(), *, path: str | None = None) -> nx.Graph:
    """HPCC's fat tree (``mix/fat.txt``) as a netsim graph, read through :func:`read_hpcc_topology`.

    ``path``: where to write the ``topology.txt`` text first (a temporary file when omitted).
    """
    import tempfile
    text = hpcc_fat_tree_text(layout)
    if path is not None:
        with open(path, "w", encoding="ascii") as fh:
            fh.write(text)
        return read_hpcc_topology(path)
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "fat.txt")
        with open(p, "w", encoding="ascii") as fh:
            fh.write(text)
        return read_hpcc_topology(p)
