"""Seeded mutators over the shipped input files: the case generators of the fuzz suite.

Every generator takes a ``random.Random`` and returns one :class:`Case`: the
files to write, the ``netsim`` command line (``{d}`` stands for the case's
folder) and what the mutator knows about the input: ``invalid=True`` when it
broke something every reader must reject (a NaN rate, an unknown node, a
negative size...), ``False`` when it is a valid input that must run, ``None``
when it cannot tell (a deleted optional key). This module covers the file
classes (topology YAML values and trees, GraphML, HPCC, flow CSV, raw bytes);
:mod:`fuzzflags` the builder expressions, workloads, flags and sweep files.
"""
from __future__ import annotations

import copy
import os
import random
import re
from dataclasses import dataclass, field

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPOLOGIES = os.path.join(ROOT, "topologies")
WORKLOADS = os.path.join(ROOT, "workloads")
#: every case runs on the analytic backend: milliseconds per valid case
FAST = ("--backend", "analytic", "--quiet", "--no-trace")


@dataclass(frozen=True)
class Case:
    """One fuzz input: ``files`` ``(name, bytes)`` written into the case folder, then ``netsim argv``."""

    cls: str
    label: str
    argv: tuple
    files: tuple = field(default=())
    invalid: bool | None = None


def _read(*parts) -> str:
    with open(os.path.join(*parts), encoding="utf-8") as fh:
        return fh.read()


#: values no numeric quantity accepts (NaN, infinities, negative, text, containers, beyond 2^53, ...)
BAD_NUMBERS = (float("nan"), float("inf"), float("-inf"), -1, "abc", [1], {"a": 1}, True,
               int("9" * 400), 2 ** 64, "1e400", "-5", "10Gbsp", "")
BAD_COUNTS = (0, -3, 2.5, float("nan"), float("inf"), "four", 2 ** 64, 99_999_999_999, [2])
DUMBBELL = yaml.safe_load(_read(TOPOLOGIES, "dumbbell.yaml"))
DUMBBELL_FLOWS = ("src,dst,size_bytes,start_ns,tag,cc,priority\n"
                  "left0,right0,100KB,0,a,,\nleft1,right1,64KB,1us,b,,0\nright2,left2,1MB,0,c,,3\n")


def flows_case(cls, label, topo_name, topo_bytes, flows_bytes=DUMBBELL_FLOWS.encode(), invalid=None,
               extra=()) -> Case:
    """``netsim flows`` of a topology file and a flow file, both written into the case folder."""
    files = ((topo_name, topo_bytes), ("flows.csv" if isinstance(flows_bytes, bytes) else flows_bytes[0],
                                       flows_bytes if isinstance(flows_bytes, bytes) else flows_bytes[1]))
    argv = ("flows", "{d}/" + topo_name, "{d}/" + files[1][0], "--out", "{d}/out") + FAST + tuple(extra)
    return Case(cls, label, argv, files, invalid)


def _dump(doc) -> bytes:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode()


#: placeholder replaced by a mapping nested ``depth`` deep (too deep for yaml.safe_dump itself)
DEEP = "@@deep@@"


def deep_dump(doc, depth: int) -> bytes:
    return _dump(doc).replace(DEEP.encode(), ("{x: " * depth + "1" + "}" * depth).encode())


# -- topology YAML values --------------------------------------------------------------------------
#: node attributes that override network parameters, with values each must reject
NODE_ATTR_BAD = {
    "buffer_bytes": BAD_NUMBERS + (2.5,), "ecn_pmax": BAD_NUMBERS + (2, 1.5),
    "ecn_kmin_bytes": BAD_NUMBERS, "buffer_alpha": BAD_NUMBERS, "scheduler": (-0.5, "fifo", 3),
    "pfc": ("maybe", 2), "lossless_priorities": ("a,b", "8", "3,9", -1), "mtu_bytes": (10, -1, float("nan")),
    "ecn_kmin_bytes.9": ("5KB",), "buffer_mode": ("dynamic",),
}
NODE_ATTR_OK = {"buffer_bytes": "16MB", "ecn_kmin_bytes.3": "10KB", "scheduler": "strict", "pfc": "off",
                "lossless_priorities": "3,4", "ecn_pmax": 0.5}
LINK_BAD = {"rate_bps": BAD_NUMBERS + (0, "0Gbps"), "delay_ns": BAD_NUMBERS + ("-1us",),
            "kind": ("carrier-pigeon", 5, None)}
LINK_OK = {"rate_bps": ("25Gbps", 4e11, "1.6Tbps"), "delay_ns": (0, "500ns", "2us"), "kind": ("ethernet",)}


def topo_values(rng: random.Random) -> Case:
    doc = copy.deepcopy(DUMBBELL)
    what = rng.choice(("node_bad", "node_ok", "link_bad", "link_ok", "kind_bad", "default_bad"))
    if what.startswith("node"):
        node = rng.choice([n for n in doc["nodes"] if n["kind"] == "switch"] + [doc["nodes"][0]])
        pool = NODE_ATTR_BAD if what == "node_bad" else NODE_ATTR_OK
        key = rng.choice(sorted(pool))
        value = rng.choice(pool[key]) if what == "node_bad" else pool[key]
        node[key] = value
        label, invalid = f"node {node['name']} {key}={value!r}", what == "node_bad"
    elif what.startswith("link"):
        link = rng.choice(doc["links"])
        key = rng.choice(sorted(LINK_BAD))
        value = rng.choice((LINK_BAD if what == "link_bad" else LINK_OK)[key])
        link[key] = value
        label, invalid = f"link {link['src']}-{link['dst']} {key}={value!r}", what == "link_bad"
    elif what == "kind_bad":
        node = rng.choice(doc["nodes"])
        node["kind"] = rng.choice(("router", "", 7, None, ["host"]))
        label, invalid = f"node {node['name']} kind={node['kind']!r}", True
    else:
        key = rng.choice(("rate_bps", "delay_ns"))
        doc["link_defaults"][key] = rng.choice(LINK_BAD[key])
        for link in doc["links"]:
            link.pop(key, None)
        label, invalid = f"link_defaults {key}={doc['link_defaults'][key]!r}", True
    return flows_case("topology-values", label, "topo.yaml", _dump(doc), invalid=invalid)


# -- topology YAML trees ---------------------------------------------------------------------------
def topo_trees(rng: random.Random) -> Case:
    doc = copy.deepcopy(DUMBBELL)
    what = rng.choice(("unknown_node", "null_name", "dup_node", "nodes_scalar", "link_no_src", "section_list",
                       "drop_key", "self_loop", "dup_link", "deep", "unknown_top"))
    invalid = True
    if what == "unknown_node":
        rng.choice(doc["links"])["dst"] = "nosuch"
    elif what == "null_name":
        rng.choice(doc["nodes"])["name"] = None
    elif what == "dup_node":
        doc["nodes"].append(dict(rng.choice(doc["nodes"])))
    elif what == "nodes_scalar":
        doc[rng.choice(("nodes", "links"))] = rng.choice((5, "abc", {"a": 1}))
    elif what == "link_no_src":
        rng.choice(doc["links"]).pop(rng.choice(("src", "dst")))
    elif what == "section_list":
        doc["link_defaults"] = [1, 2]
    elif what == "drop_key":   # an optional key, or not: the outcome must only be clean
        sec = rng.choice(("name", "link_defaults"))
        doc.pop(sec, None)
        invalid = None
    elif what == "self_loop":
        link = rng.choice(doc["links"])
        link["dst"] = link["src"]
    elif what == "dup_link":
        doc["links"].append(dict(rng.choice(doc["links"])))
        invalid = None
    elif what == "deep":   # nesting 10..1000 deep under a node attribute (readers: RecursionError)
        depth = rng.choice((10, 200, 1000))
        doc["nodes"][0]["buffer_bytes"] = DEEP
        what = f"deep{depth}"
        return flows_case("topology-trees", what, "topo.yaml", deep_dump(doc, depth), invalid=invalid)
    else:
        doc["nodez"] = []
    return flows_case("topology-trees", what, "topo.yaml", _dump(doc), invalid=invalid)


# -- GraphML ---------------------------------------------------------------------------------------
GRAPHML = _read(TOPOLOGIES, "fat_tree_k4.graphml")
GRAPHML_FLOWS = "src,dst,size_bytes,start_ns\nh0,h15,100KB,0\nh3,h8,1MB,2us\n"


def graphml(rng: random.Random) -> Case:
    text, invalid = GRAPHML, True
    keys = {"d1": "node kind", "d2": "rate_bps", "d3": "delay_ns", "d4": "edge kind"}
    what = rng.choice(("value", "value", "value_ok", "truncate", "drop_target", "garbage"))
    if what.startswith("value"):
        key = rng.choice(sorted(keys))
        spots = [m for m in re.finditer(rf'<data key="{key}">([^<]*)</data>', text)]
        m = rng.choice(spots)
        if what == "value":
            new = {"d1": ("router", ""), "d2": ("nan", "-1", "inf", "abc", "0"),
                   "d3": ("nan", "-5", "1e400", "abc", "2.5e300"), "d4": ("pigeon", "")}[key]
        else:
            new = {"d1": ("switch",), "d2": ("25000000000.0",), "d3": ("500",), "d4": ("ethernet",)}[key]
            invalid = False
            if key == "d1" and m.group(1) == "host":
                new = ("host",)
        value = rng.choice(new)
        text = text[:m.start(1)] + value + text[m.end(1):]
        label = f"{keys[key]}={value!r} at offset {m.start(1)}"
    elif what == "truncate":
        cut = rng.randrange(len(text) // 4, len(text) - 20)
        text, label = text[:cut], f"truncated at {cut}"
    elif what == "drop_target":
        spots = [m for m in re.finditer(r' target="[^"]*"', text)]
        m = rng.choice(spots)
        text, label = text[:m.start()] + text[m.end():], f"edge without target at {m.start()}"
    else:
        at = rng.randrange(len(text))
        text, label, invalid = text[:at] + "<<&\x01" + text[at:], f"garbage at {at}", True
    return flows_case("graphml", label, "topo.graphml", text.encode(), ("flows.csv", GRAPHML_FLOWS.encode()),
                      invalid=invalid)


# -- HPCC topology.txt / flow.txt ------------------------------------------------------------------
HPCC_TOPO = _read(TOPOLOGIES, "hpcc_small", "topology.txt")
HPCC_FLOW = _read(TOPOLOGIES, "hpcc_small", "flow.txt")
#: token positions (line index from 0, field index) whose mutation is a known error
HPCC_TOPO_FIELDS = {"link src": (0,), "link dst": (1,), "rate": (2,), "delay": (3,)}
HPCC_FLOW_FIELDS = {"src": (0,), "dst": (1,), "size": (4,), "start": (5,)}
HPCC_BAD = ("-1", "nan", "abc", "\u00b9", "1e400", "inf", "2.5e400")
#: node indices must name a node; a large time or delay is valid
HPCC_BAD_NODE = HPCC_BAD + ("99999",)


def hpcc(rng: random.Random) -> Case:
    topo, flow = HPCC_TOPO.splitlines(), HPCC_FLOW.splitlines()
    what = rng.choice(("topo", "flow", "flow", "header", "ok"))
    invalid = True
    if what == "topo":
        i = rng.randrange(2, len(topo))
        name = rng.choice(sorted(HPCC_TOPO_FIELDS))
        toks = topo[i].split()
        bad = rng.choice(HPCC_BAD_NODE if name.startswith("link") else HPCC_BAD)
        toks[HPCC_TOPO_FIELDS[name][0]] = bad
        topo[i], label = " ".join(toks), f"topology line {i + 1} {name}={bad!r}"
    elif what == "flow":
        i = rng.randrange(1, len(flow))
        name = rng.choice(sorted(HPCC_FLOW_FIELDS))
        toks = flow[i].split()
        bad = rng.choice(HPCC_BAD_NODE if name in ("src", "dst") else HPCC_BAD)
        toks[HPCC_FLOW_FIELDS[name][0]] = bad
        flow[i], label = " ".join(toks), f"flow line {i + 1} {name}={bad!r}"
    elif what == "header":
        bad = rng.choice(("100000000 3 10", "11 3", "11 -3 10", "11 3 999", "\u00b9\u00b9 3 10"))
        topo[0], label = bad, f"topology header {bad!r}"
        if bad == "11 3 999":
            invalid = None
    else:
        label, invalid = "unchanged", False
    files = (("topology.txt", ("\n".join(topo) + "\n").encode()), ("flow.txt", ("\n".join(flow) + "\n").encode()))
    argv = ("flows", "{d}/topology.txt", "{d}/flow.txt", "--out", "{d}/out") + FAST
    return Case("hpcc", label, argv, files, invalid)


# -- flow CSV --------------------------------------------------------------------------------------
CSV_BAD = {
    "size_bytes": ("nan", "-5", "2.5", "1e30", "9007199254740993", "abc", "inf", "1e400", "\u00b9"),
    "start_ns": ("-1", "nan", "abc", "inf", "-2us", "1e400"),
    "src": ("nosuch", "switch_left", ""), "dst": ("nosuch", "switch_right", ""),
    "cc": ("nosuchcc", "DCQCN!"), "priority": ("9", "-1", "2.5", "abc", "nan"),
}
CSV_OK = {"size_bytes": ("1", "4096", "1MiB", "9007199254740992"), "start_ns": ("0", "5us", "1ms"),
          "cc": ("dcqcn", "cubic", "none"), "priority": ("0", "7")}


def flow_csv(rng: random.Random) -> Case:
    rows = [r.split(",") for r in DUMBBELL_FLOWS.strip().splitlines()]
    head = rows[0]
    what = rng.choice(("bad", "bad", "ok", "drop_column", "long_field", "header_only"))
    invalid = True
    if what in ("bad", "ok"):
        pool = CSV_BAD if what == "bad" else CSV_OK
        col = rng.choice(sorted(pool))
        r = rng.randrange(1, len(rows))
        rows[r][head.index(col)] = value = rng.choice(pool[col])
        label, invalid = f"row {r} {col}={value!r}", what == "bad"
    elif what == "drop_column":
        col = rng.choice(("src", "dst", "size_bytes", "start_ns"))
        i = head.index(col)
        rows = [r[:i] + r[i + 1:] for r in rows]
        label = f"no column {col}"
    elif what == "long_field":   # readers: a field over 128 KiB
        rows[1][head.index("tag")] = "t" * rng.choice((1000, 200_000))
        label, invalid = f"tag of {len(rows[1][head.index('tag')])} chars", None
    else:
        rows, label, invalid = rows[:1], "header only", True   # no flows: exit 2, as an empty imported job
    text = "\n".join(",".join(r) for r in rows) + "\n"
    return flows_case("flow-csv", label, "topo.yaml", _dump(DUMBBELL), ("flows.csv", text.encode()),
                      invalid=invalid)


# -- raw bytes -------------------------------------------------------------------------------------
def raw_bytes(rng: random.Random) -> Case:
    """Random bytes (with NULs, invalid UTF-8, a BOM or a huge line) in place of one input file."""
    kind = rng.choice(("random", "nul", "utf8", "bom", "longline", "mangled"))
    if kind == "random":
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
    elif kind == "nul":
        base = _read(TOPOLOGIES, "dumbbell.yaml")
        at = rng.randrange(len(base))
        data = (base[:at] + "\x00" + base[at:]).encode()
    elif kind == "utf8":
        data = b"name: x\nnodes: [\xff\xfe\xfa]\n"
    elif kind == "bom":
        data = b"\xef\xbb\xbf" + bytes(rng.randrange(32, 127) for _ in range(200))
    elif kind == "longline":
        data = b"a" * rng.choice((10_000, 300_000)) + b"\n"
    else:
        base = bytearray(_read(TOPOLOGIES, "dumbbell.yaml").encode())
        for _ in range(rng.randrange(1, 20)):
            base[rng.randrange(len(base))] = rng.randrange(256)
        data, kind = bytes(base), "mangled"
    role = rng.choice(("topology.yaml", "topology.graphml", "topology.txt", "flows.csv", "flow.txt",
                       "workload.yaml", "ccparams.yaml", "sweep.yaml"))
    label = f"{kind} bytes ({len(data)}) as {role}"
    invalid = None if kind == "mangled" else True
    if role == "ccparams.yaml" and kind in ("random", "bom"):
        invalid = None   # a comment-only (empty) parameter file is valid: nothing to override
    if role.startswith("topology"):
        return flows_case("raw-bytes", label, role, data, invalid=invalid)
    if role in ("flows.csv", "flow.txt"):
        return flows_case("raw-bytes", label, "topo.yaml", _dump(DUMBBELL), (role, data), invalid=invalid)
    if role == "workload.yaml":
        argv = ("run", "gpu_cluster:servers=2,gpus_per_server=2", "{d}/" + role, "--out", "{d}/out") + FAST
    elif role == "sweep.yaml":
        argv = ("sweep", "{d}/" + role, "--out", "{d}/out", "--dry-run", "--quiet")
    else:
        case = flows_case("raw-bytes", label, "topo.yaml", _dump(DUMBBELL), invalid=invalid,
                          extra=("--cc", "dcqcn", "--cc-params-file", "{d}/" + role))
        return Case(case.cls, label, case.argv, case.files + ((role, data),), invalid)
    return Case("raw-bytes", label, argv, ((role, data),), invalid)
