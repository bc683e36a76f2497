"""Flow files: a list of flows to inject (``netsim flows``).

Two formats, chosen by content:

* CSV with a header ``src,dst,size_bytes,start_ns`` and optional ``tag``,
  ``cc``, ``priority`` columns; node names from the topology; sizes and times
  may carry units (``1MB``, ``64KiB``, ``10us``);
* HPCC/ns-3 ``flow.txt``: first line the flow count, then exactly that many
  flow lines ``src dst pg dport size_bytes start_s`` (what follows, such as
  the help text HPCC ships, is ignored with a note; fewer lines than declared
  is an error, :mod:`netsim.topology.hpcc`); nodes are indices, mapped to the
  node named ``str(index)`` (an HPCC ``topology.txt`` graph); ``pg`` becomes
  the priority and ``dport`` the tag ``"dport=N"``.

Unreachable destinations (no path whose intermediate nodes are all switches,
NICs, NVSwitches or PCIe switches — the router's rule) are rejected with the
flow's line; :func:`check_reachable` asks the router itself. A row with
``src == dst`` is a self-send: a local copy that never touches the network and
that every backend completes at once with the same record (FCT 0, ideal FCT 0;
:mod:`netsim.network.send`), as ``Backend.send`` treats it.
Left out: HPCC's ``maxPacketCount`` and other per-flow ns-3 options.
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field

from .errors import InputError
from .flowvalues import MAX_START_NS, parse_size_bytes, parse_start_ns  # noqa: F401 (MAX_START_NS: re-exported)
from .network.fabric import ENDPOINT_KINDS, MAX_FLOW_BYTES, MAX_PRIORITY

REQUIRED = ("src", "dst", "size_bytes", "start_ns")
OPTIONAL = ("tag", "cc", "priority")


@dataclass(frozen=True)
class FlowSpec:
    """One flow to inject: ``size_bytes`` from ``src`` to ``dst`` at ``start_ns``.

    At ``start_ns`` it becomes one ``Backend.send``, checked there by
    :class:`netsim.network.send.SendContract` into a
    :class:`~netsim.network.send.SendSpec` (the same rules on every backend).
    """

    src: str
    dst: str
    size_bytes: int
    start_ns: int
    tag: str = ""
    cc: str = ""
    priority: int | None = None
    #: where the flow was read (file name and line; empty for flows built in code), for error messages
    source: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)


def _node(graph, name: str, source: str, where: str):
    if name in graph:
        kind = graph.nodes[name].get("kind")
        if kind not in ENDPOINT_KINDS:
            raise InputError(f"a flow starts and ends at a GPU or host, not a {kind}", source=source, where=where,
                             value=name, accepted="a node of kind gpu or host")
        return name
    raise InputError("unknown node", source=source, where=where, value=name,
                     accepted=f"a node of the topology (e.g. {', '.join(map(str, sorted(graph.nodes, key=str)[:3]))}, ...)")


class _Reach:
    """Which endpoints can reach which, by the router's rule: intermediate hops are never a GPU or host.

    Connected components of the graph without GPUs and hosts, computed once per file;
    ``ok(a, b)`` is true when ``a`` and ``b`` are adjacent or touch a common component.
    """

    def __init__(self, graph):
        self.graph = graph
        self._comp: dict | None = None

    def _components(self) -> dict:
        if self._comp is None:
            g = self.graph
            # the router's rule: routes transit switches/NICs, and GPUs too on a gpu_forwarding topology
            from .topology.routing import relay_kinds
            relay = relay_kinds(g)
            stop = set(ENDPOINT_KINDS) - relay
            comp: dict = {}
            for n in g.nodes:
                if n in comp or g.nodes[n].get("kind") in stop:
                    continue
                comp[n] = n
                stack = [n]
                while stack:
                    u = stack.pop()
                    for v in g.neighbors(u):
                        if v not in comp and g.nodes[v].get("kind") not in stop:
                            comp[v] = n
                            stack.append(v)
            self._comp = comp
        return self._comp

    def _touch(self, node) -> set:
        comp = self._components()
        if node in comp:
            return {comp[node]}
        return {comp[m] for m in self.graph.neighbors(node) if m in comp}

    def ok(self, a, b) -> bool:
        return self.graph.has_edge(a, b) or bool(self._touch(a) & self._touch(b))


def _check(f: FlowSpec, source: str, line: int, reach: _Reach | None = None) -> FlowSpec:
    if f.size_bytes <= 0:
        raise InputError("size must be > 0", source=source, where=f"line {line}, field size_bytes",
                         value=f.size_bytes, accepted="a positive size such as 1500, 64KB or 1MB")
    if f.size_bytes > MAX_FLOW_BYTES:
        raise InputError("size too large", source=source, where=f"line {line}, field size_bytes",
                         value=f.size_bytes, accepted=f"at most 2**53 = {MAX_FLOW_BYTES} bytes (9 PB)")
    # src == dst is a self-send: a local copy that every backend completes at once (netsim.network.send)
    if reach is not None and f.src != f.dst and not reach.ok(f.src, f.dst):
        raise InputError(f"destination unreachable from {f.src}", source=source, where=f"line {line}, field dst",
                         value=f.dst, accepted="a node connected to the source through switches/NICs "
                         "(routes never transit a GPU or host)")
    return f


def _cc_name(name: str, source: str, where: str) -> None:
    """A flow's ``cc`` column names a registered congestion control, exactly as ``--cc`` does (lower case)."""
    from .transport.cc.config import REGISTRY, cc_class
    cls = cc_class(name, where=where, source=source)
    if cls.name != name:
        raise InputError("unknown congestion control", source=source, where=where, value=name,
                         accepted="one of: " + ", ".join(sorted(REGISTRY)) + f" (as --cc); did you mean {cls.name}?")


def _read_csv(text: str, graph, source: str) -> list[FlowSpec]:
    rows = []
    reader = csv.reader(io.StringIO(text))
    try:
        for row in reader:
            rows.append(row)
    except csv.Error as exc:  # a field over csv.field_size_limit() (128 KiB), an unclosed quote at the end
        raise InputError(f"unreadable CSV ({exc})", source=source, where=f"line {reader.line_num}",
                         accepted=f"fields of at most {csv.field_size_limit()} characters, quotes closed") from None
    # skip blank and comment lines but remember their line numbers
    numbered = [(i + 1, r) for i, r in enumerate(rows) if r and any(c.strip() for c in r)
                and not r[0].lstrip().startswith("#")]
    if not numbered:
        raise InputError("empty flow file", source=source, accepted="a CSV header src,dst,size_bytes,start_ns "
                         "and one flow per line, or an HPCC flow.txt")
    hline, header = numbered[0]
    header = [h.strip() for h in header]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"missing header column(s) {', '.join(missing)}", source=source, where=f"line {hline}",
                         value=",".join(header), accepted="a header src,dst,size_bytes,start_ns[,tag,cc,priority]")
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise InputError("column given twice", source=source, where=f"line {hline}", value=twice[0],
                         accepted="each column once")
    unknown = [c for c in header if c not in REQUIRED + OPTIONAL]
    if unknown:
        raise InputError("unknown column", source=source, where=f"line {hline}", value=unknown[0],
                         accepted="columns " + ", ".join(REQUIRED + OPTIONAL))
    col = {c: i for i, c in enumerate(header)}
    reach = _Reach(graph)
    out = []
    for line, row in numbered[1:]:
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields, got {len(row)}", source=source, where=f"line {line}",
                             value=",".join(row))
        get = lambda c: row[col[c]].strip() if c in col else ""  # noqa: E731
        src = _node(graph, get("src"), source, f"line {line}, field src")
        dst = _node(graph, get("dst"), source, f"line {line}, field dst")
        size = parse_size_bytes(get("size_bytes"), source, f"line {line}, field size_bytes")
        start = parse_start_ns(get("start_ns"), source, f"line {line}, field start_ns")
        prio = None
        if get("priority") != "":
            try:
                prio = int(get("priority"))
                if not 0 <= prio <= MAX_PRIORITY:
                    raise ValueError
            except ValueError:
                raise InputError("bad priority", source=source, where=f"line {line}, field priority",
                                 value=get("priority"), accepted=f"an 802.1p priority 0..{MAX_PRIORITY}") from None
        if get("cc") != "":
            _cc_name(get("cc"), source, f"line {line}, field cc")
        out.append(_check(FlowSpec(src, dst, size, start, get("tag"), get("cc"), prio, source, line), source, line,
                          reach))
    return out


def _looks_like_flow(cols: list[str]) -> bool:
    """A flow line: HPCC node indices first, or six fields with numeric pg and dport (named nodes)."""
    # any Unicode digit counts here, so that a record with a superscript is reported at its field
    return (len(cols) >= 2 and cols[0].isdigit() and cols[1].isdigit()) or \
        (len(cols) == 6 and cols[2].isdigit() and cols[3].isdigit())


def _read_hpcc(lines: list[tuple[int, str]], graph, source: str) -> list[FlowSpec]:
    """HPCC ``flow.txt``: exactly the declared number of flow lines (what follows is ignored, with a note)."""
    from .topology.hpcc import Declared, ascii_int, take_declared
    line0, first = lines[0]
    count = ascii_int(first.split()[0])
    if count is None:
        raise InputError("bad flow count", source=source, where=f"line {line0}", value=first.strip(),
                         accepted="HPCC flow.txt: the number of flows on the first line (ASCII digits)")
    body = take_declared(lines[1:], Declared(count, "flows", line0, "flow count"), source, _looks_like_flow,
                         error=InputError)
    reach = _Reach(graph)
    out = []
    for line, text in body:
        cols = text.split()
        if len(cols) != 6:
            raise InputError("expected 6 fields 'src dst pg dport size_bytes start_s'", source=source,
                             where=f"line {line}", value=text.strip())
        names = []
        for field, v in (("src", cols[0]), ("dst", cols[1])):
            k = ascii_int(v)
            names.append(_node(graph, str(k) if k is not None else v, source, f"line {line}, field {field}"))
        ints = {}
        for field, v in (("pg", cols[2]), ("dport", cols[3])):
            ints[field] = ascii_int(v)
            if ints[field] is None:
                raise InputError("not an integer", source=source, where=f"line {line}, field {field}",
                                 value=v, accepted="a non-negative integer in ASCII digits")
        if not 0 <= ints["pg"] <= MAX_PRIORITY:
            raise InputError("bad priority group", source=source, where=f"line {line}, field pg", value=ints["pg"],
                             accepted=f"an 802.1p priority 0..{MAX_PRIORITY}")
        size = parse_size_bytes(cols[4], source, f"line {line}, field size_bytes")
        start = parse_start_ns(cols[5], source, f"line {line}, field start_s", default_unit="s")
        out.append(_check(FlowSpec(names[0], names[1], size, start, f"dport={ints['dport']}", "", ints["pg"]),
                          source, line, reach))
    return out


def load_flows(path, graph) -> list[FlowSpec]:
    """Read a CSV or HPCC ``flow.txt`` flow file, checking every node against ``graph``.

    Parameters
    ----------
    path : str or os.PathLike
        The flow file.
    graph : networkx.Graph
        The topology (node names to check against).

    Returns
    -------
    list of FlowSpec
        In file order; ``size_bytes`` integer bytes, ``start_ns`` integer ns.

    Raises
    ------
    InputError
        Naming the file, line, field and value: unknown node, size <= 0,
        unreachable destination, bad unit, empty or headerless file, no flows, wrong flow count.
    """
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8-sig") as fh:  # -sig: tolerate a spreadsheet's BOM
            text = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read flow file ({exc.strerror})", source=source) from None
    except UnicodeDecodeError:
        raise InputError("not a text file (UTF-8)", source=source,
                         accepted="a CSV flow file or an HPCC flow.txt") from None
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise InputError("empty flow file", source=source, accepted="a CSV header src,dst,size_bytes,start_ns "
                         "and one flow per line, or an HPCC flow.txt")
    first = lines[0][1].split()
    hpcc = len(first) == 1 and first[0].isascii() and first[0].isdigit()
    flows = _read_hpcc(lines, graph, source) if hpcc else _read_csv(text, graph, source)
    if not flows:  # as an imported job with no operations: nothing to simulate is an input error
        raise InputError("no flows", source=source, where="line 1" if hpcc else "after the header",
                         value=first[0] if hpcc else "header only",
                         accepted="at least one flow (HPCC flow.txt: a count >= 1)" if hpcc
                         else "at least one flow line after the CSV header")
    return flows


def check_reachable(flows, router) -> None:
    """Raise :class:`~netsim.errors.RoutingError` for the first flow whose destination is unreachable
    (a self-send needs no route)."""
    for f in flows:
        if f.src != f.dst:
            router.path(f.src, f.dst, 0)
