"""Seeded mutators for builder expressions, workloads, ``run``/``flows``/what-if flags and sweep files.

The values a parameter flag must reject come from the parameter's own
declaration (:class:`netsim.params.Param`: kind and bounds), so every
``--set``/``--cc-param`` name is covered, and a new parameter is fuzzed
without a change here. See :mod:`fuzzcases` for :class:`Case`.
"""
from __future__ import annotations

import copy
import random

import yaml

from fuzzcases import (BAD_COUNTS, DEEP, DUMBBELL, DUMBBELL_FLOWS, FAST, WORKLOADS, Case, _dump, deep_dump,
                       flows_case)

# -- builder expressions ---------------------------------------------------------------------------
#: base expressions and the count arguments each takes
BUILDERS = {
    "leaf_spine": ("leaves=2,spines=1,hosts_per_leaf=2", ("leaves", "spines", "hosts_per_leaf")),
    "dumbbell": ("n_left=2,n_right=3", ("n_left", "n_right")),
    "fat_tree": ("k=4", ("k",)),
    "gpu_server": ("gpus=4,gpus_per_nic=2", ("gpus", "gpus_per_nic")),
    "gpu_cluster": ("servers=2,gpus_per_server=4", ("servers", "gpus_per_server", "gpus_per_nic")),
}
BAD_EXPR_VALUES = ("nan", "inf", "-1", "abc", "1e400", "0Gbps", "")


def builder_expr(rng: random.Random) -> Case:
    name = rng.choice(sorted(BUILDERS))
    base, counts = BUILDERS[name]
    what = rng.choice(("count", "count", "rate", "unknown_arg", "unknown_builder", "ok", "disconnected",
                       "syntax"))
    invalid = True
    if what == "count":
        key, value = rng.choice(counts), rng.choice(BAD_COUNTS)
        expr = f"{name}:{base},{key}={value}" if key not in base else \
            ",".join(f"{key}={value}" if p.startswith(key + "=") else p for p in base.split(","))
        expr = expr if expr.startswith(name) else f"{name}:{expr}"
    elif what == "rate":
        rate = {"leaf_spine": "host_rate_bps", "dumbbell": "host_rate_bps", "fat_tree": "rate_bps",
                "gpu_server": "nic_rate_bps", "gpu_cluster": "nic_rates_bps"}[name]
        expr = f"{name}:{base},{rate}={rng.choice(BAD_EXPR_VALUES)}"
    elif what == "unknown_arg":
        expr = f"{name}:{base},colour=blue"
    elif what == "unknown_builder":
        expr = f"{name}x:{base}"
    elif what == "disconnected":
        expr = "gpu_cluster:spines=0" if rng.random() < 0.5 else "gpu_cluster:servers=4,servers_per_leaf=1,spines=0"
    elif what == "syntax":
        expr = rng.choice((f"{name}:{base},,", f"{name}:{base},=3", f"{name}:leaves", f"{name}:{base},{counts[0]}=1"))
        invalid = None if expr.endswith(",,") else True
    else:
        expr, invalid = f"{name}:{base}", False
    return Case("builder", expr, ("topo", "validate", expr), (), invalid)


# -- workloads -------------------------------------------------------------------------------------
#: a 4-GPU GPT and a 4-GPU MoE, milliseconds on the analytic backend
GPT = {"name": "fuzz-gpt", "model": {"preset": "gpt-1.5b", "layers": 2, "hidden": 128, "heads": 4, "seq_len": 64,
                                     "vocab": 1024},
       "training": {"global_batch": 4, "micro_batch": 1, "precision": "fp16"},
       "parallelism": {"tp": 2, "pp": 1, "dp": 2, "bucket_bytes": "1MiB"},
       "collectives": {"dp": {"algorithm": "ring", "chunk_bytes": "256KiB"}}, "compute": {"gpu": "v100-sxm2"}}
MOE = {"name": "fuzz-moe", "model": {"preset": "gpt-350m", "layers": 2, "hidden": 128, "heads": 4, "seq_len": 64,
                                     "vocab": 1024, "moe": {"experts": 4, "top_k": 2, "every": 2}},
       "training": {"global_batch": 8, "micro_batch": 2}, "parallelism": {"dp": 4, "ep": 4}}
WL_TOPO = "gpu_cluster:servers=2,gpus_per_server=2"
#: largest exact integer of a double: netsim.params.MAX_EXACT (written out so the fuzzer also runs on older code)
MAX_EXACT = 2 ** 53
#: field -> (type, a valid replacement or None)
WL_FIELDS = {
    "training.global_batch": ("int", None), "training.micro_batch": ("int", None),
    "parallelism.dp": ("int", None), "parallelism.tp": ("int", None),
    "parallelism.bucket_bytes": ("size", "4MiB"), "collectives.dp.chunk_bytes": ("size", "512KiB"),
    "collectives.dp.channels": ("int", 2), "compute.utilization": ("frac", 0.5),
    "compute.peak_flops": ("flops", "100T"), "compute.optimizer_bytes_per_param": ("num", 16),
    "model.layers": ("int", 4), "model.hidden": ("int", 256), "model.ffn_hidden": ("int", 512),
    "model.seq_len": ("int", 128), "model.vocab": ("int", 2048), "memory.capacity_bytes": ("size", "16GiB"),
}
MOE_FIELDS = {"model.moe.skew_decay_iterations": ("num", 10.0), "model.moe.skew_start": ("num", 0.3),
              "model.moe.skew_end": ("num", 0.01), "model.moe.capacity_factor": ("pos", 2.0),
              "model.moe.experts": ("int", None), "model.moe.top_k": ("int", 1)}
BAD_BY_TYPE = {
    "int": (float("nan"), float("inf"), -1, 0, 2.5, "abc", [1], 2 ** 64, True),
    "size": (float("nan"), float("inf"), -1, 2.5, "abc", [1], 2 ** 64, 9007199254740993, "1.5b", "12.5"),
    "num": (float("nan"), float("inf"), float("-inf"), -1, "abc", [1]),
    "pos": (float("nan"), float("inf"), -1, 0, "abc"),
    "frac": (float("nan"), float("inf"), -1, 0, 1.5, "abc"),
    "flops": (float("nan"), float("inf"), -1, 0, "abc", "1e30T"),
}


def _set(doc: dict, dotted: str, value) -> None:
    cur = doc
    keys = dotted.split(".")
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
    cur[keys[-1]] = value


def _run_case(cls, label, doc, invalid, extra=()) -> Case:
    argv = ("run", WL_TOPO, "{d}/wl.yaml", "--out", "{d}/out") + FAST + tuple(extra)
    return Case(cls, label, argv, (("wl.yaml", _dump(doc)),), invalid)


def workload_values(rng: random.Random) -> Case:
    moe = rng.random() < 0.3
    doc, fields = copy.deepcopy(MOE if moe else GPT), (MOE_FIELDS if moe else WL_FIELDS)
    key = rng.choice(sorted(fields))
    kind, ok = fields[key]
    if ok is not None and rng.random() < 0.25:
        _set(doc, key, ok)
        return _run_case("workload-values", f"{doc['name']} {key}={ok!r}", doc, False)
    value = rng.choice(BAD_BY_TYPE[kind])
    if key == "model.ffn_hidden" and value == 0:
        value = -1           # 0 = 4 x hidden, a valid value
    _set(doc, key, value)
    return _run_case("workload-values", f"{doc['name']} {key}={value!r}", doc, True)


def workload_trees(rng: random.Random) -> Case:
    doc = copy.deepcopy(GPT)
    what = rng.choice(("section_scalar", "unknown_key", "unknown_section", "drop_required", "deep", "model_list",
                       "unchanged"))
    invalid = True
    if what == "section_scalar":
        doc[rng.choice(("training", "parallelism", "collectives", "compute"))] = rng.choice((5, "x", [1, 2]))
    elif what == "unknown_key":
        doc[rng.choice(("training", "parallelism", "compute", "model"))]["colour"] = "blue"
    elif what == "unknown_section":
        doc["trainnig"] = {"global_batch": 4}
    elif what == "drop_required":
        del doc["training"]["global_batch"]
    elif what == "deep":   # readers: a workload nested 1,000 deep gave a RecursionError
        depth = rng.choice((10, 300, 1000))
        doc["model"]["x"] = DEEP
        argv = ("run", WL_TOPO, "{d}/wl.yaml", "--out", "{d}/out") + FAST
        return Case("workload-trees", f"deep{depth}", argv, (("wl.yaml", deep_dump(doc, depth)),), True)
    elif what == "model_list":
        doc["model"] = [1, 2, 3]
    else:
        invalid = False
    return _run_case("workload-trees", what, doc, invalid)


# -- run / flows / what-if flags -------------------------------------------------------------------
def _tables():
    from netsim.backends.analytic import ANALYTIC_PARAMS
    from netsim.backends.flow.settings import FLOW_PARAMS
    from netsim.network.params import SIM_PARAMS
    from netsim.hoststack import HOST_PARAMS
    from netsim.transport.cc.config import _load_all
    from netsim.transport.cc.base import REGISTRY
    _load_all()
    sets = [("", p) for t in (SIM_PARAMS, FLOW_PARAMS, ANALYTIC_PARAMS) for p in t] + \
        [("host.", p) for p in HOST_PARAMS]
    ccs = {name: list(cls.PARAMS) for name, cls in sorted(REGISTRY.items())}
    return sets, ccs


def bad_values(p) -> list:
    """Strings a flag of Param ``p`` must reject, from its kind and declared bounds.

    Beyond the declared bounds every number is bounded by 2^53 (``netsim.params.MAX_EXACT``)
    and rates by 1 Eb/s; sizes, times and rates are never negative, a rate never 0.
    """
    if p.kind in ("int", "float", "size", "time", "rate"):
        lo = p.minimum if p.minimum is not None else (0 if p.kind in ("size", "time", "rate") else None)
        hi = p.maximum if p.maximum is not None else (1e18 if p.kind == "rate" else MAX_EXACT)
        out = ["nan", "inf", "-inf", "abc", "1/0", "", str(int(hi) * 2 + 1)]
        if p.kind == "rate" and p.minimum is None:
            out.append("0")
        elif lo is not None:
            out.append(repr(lo - 0.5) if p.kind == "float" else str(int(lo) - 1))
        if p.kind in ("int", "size"):
            out.append("2.5")
        return out
    return {"bool": ["maybe", "2"], "choice": ["nosuch", "-0.5"]}.get(p.kind, [])


PRIORITY_BAD = ["a,b", "8", "3,9", "-1"]
FLOW_ONLY = ("flow_fairness", "flow_pfc_hol", "flow_port_fair_max_flows", "flow_dcqcn_tick_ns")


def flags(rng: random.Random) -> Case:
    sets, ccs = _tables()
    what = rng.choice(("set", "set", "cc_param", "cc_param", "set_ok", "whatif", "whatif", "misc"))
    base_flows = lambda label, extra, invalid: flows_case(  # noqa: E731
        "flags", label, "topo.yaml", _dump(DUMBBELL), DUMBBELL_FLOWS.encode(), invalid=invalid, extra=extra)
    if what in ("set", "set_ok"):
        if what == "set_ok":   # the analytic backend (of every valid case) refuses what it cannot honour
            from netsim.backends.analytic import ANALYTIC_PARAMS
            from netsim.cli.args import ANALYTIC_HONOURS
            sets = [s for s in sets if s[0] == "host." or s[1].name in ANALYTIC_HONOURS
                    or (s[1].name in ANALYTIC_PARAMS and s[1].name not in FLOW_ONLY)]
        prefix, p = rng.choice([s for s in sets if s[1].kind != "str" or s[1].name == "lossless_priorities"])
        values = (PRIORITY_BAD if p.name == "lossless_priorities" else bad_values(p)) if what == "set" else \
            ([] if p.default is None else [str(p.default)])
        if not values:
            values, what = [str(p.default)], "set_ok"
        arg = f"{prefix}{p.name}={rng.choice(values)}"
        extra, invalid = ("--set", arg), what == "set"
        if rng.random() < 0.4:
            return _run_case("flags", f"run --set {arg}", GPT, invalid, extra)
        return base_flows(f"flows --set {arg}", extra, invalid)
    if what == "cc_param":
        cc = rng.choice(sorted(ccs))
        choices = [p for p in ccs[cc] if bad_values(p)]
        p = rng.choice(choices)
        arg = f"{p.name}={rng.choice(bad_values(p))}"
        return base_flows(f"--cc {cc} --cc-param {arg}", ("--cc", cc, "--cc-param", arg), True)
    if what == "whatif":
        flag, value, invalid = rng.choice((
            ("--straggler", "0=inf", True), ("--straggler", "0=1e300", True), ("--straggler", "0=nan", True),
            ("--straggler", "0=-1", True), ("--straggler", "99=2", True), ("--straggler", "\u00b9=2", True),
            ("--straggler", "1=1.5", False), ("--degrade-link", "s0.nic0:leaf0=inf", True),
            ("--degrade-link", "s0.nic0:leaf0=nan@1us", True), ("--degrade-link", "s0.nic0:leaf0=0.5@-1us", True),
            ("--degrade-link", "s0.nic0:nosuch=0.5", True), ("--degrade-link", "s0.nic0:leaf0=0.5@1us", False),
            ("--fail-link", "s0.nic0:leaf0@abc", True), ("--fail-link", "nosuch:leaf0@1us", True),
            ("--inject-delay", "allreduce@dp=-1ms", True), ("--inject-delay", "nosuch=1ms", True),
            ("--inject-delay", "allreduce@dp=nanms", True), ("--inject-delay", "allreduce@dp=1us", False),
            ("--iterations", "0", True), ("--iterations", "abc", True), ("--workload-set", "parallelism.dp=nan", True),
            ("--workload-set", "training.micro_batch=2.5", True), ("--workload-set", "compute.utilization=0.5", False)))
        return _run_case("flags", f"run {flag} {value}", GPT, invalid, (flag, value))
    flag, value, invalid = rng.choice((("--backend", "nosuch", True), ("--cc", "nosuchcc", True),
                                       ("--set", "noequals", True), ("--set", "bufer_bytes=1MB", True),
                                       ("--cc-param", "nosuch.g=1", True), ("--seed", "abc", True),
                                       ("--set", "ecn_kmin_bytes.9=5KB", True),
                                       ("--set", "tcp_priority=5", False)))  # roce_priority=5 makes RoCE lossy: flow rejects it
    return base_flows(f"flows {flag} {value}", (flag, value), invalid)


# -- sweep files -----------------------------------------------------------------------------------
def sweep(rng: random.Random) -> Case:
    doc = {"command": "flows", "topology": "{d}/topo.yaml", "flows": "{d}/flows.csv", "backend": "analytic",
           "cc": "none", "grid": {"set.mtu_bytes": ["1500", "4096"]}, "repetitions": 1}  # analytic honours MTU
    what = rng.choice(("command", "unknown_key", "grid_scalar", "zip_unequal", "repetitions", "missing_file",
                       "grid_value", "unchanged"))
    invalid = True
    if what == "command":
        doc["command"] = rng.choice(("flow", "", 3))
    elif what == "unknown_key":
        doc["gird"] = {}
    elif what == "grid_scalar":
        doc["grid"] = rng.choice((5, "x", [1]))
    elif what == "zip_unequal":
        doc["zip"] = {"set.ecn_kmin_bytes": ["5KB", "6KB"], "set.ecn_kmax_bytes": ["200KB"]}
    elif what == "repetitions":
        doc["repetitions"] = rng.choice((-1, 0, 2.5, float("nan"), "two"))
    elif what == "missing_file":
        doc["flows"] = "{d}/nosuch.csv"
    elif what == "grid_value":   # a point's value is checked when the point runs, or up front: clean either way
        doc["grid"] = {"set.ecn_kmin_bytes": [rng.choice(("nan", "-1", "abc"))]}
        invalid = None
    else:
        invalid = False
    text = yaml.safe_dump(doc, sort_keys=False)
    files = (("sweep.yaml", text.encode()), ("topo.yaml", _dump(DUMBBELL)), ("flows.csv", DUMBBELL_FLOWS.encode()))
    return Case("sweep", what, ("sweep", "{d}/sweep.yaml", "--out", "{d}/out", "--dry-run", "--quiet"), files,
                invalid)


# -- netsim traffic: flags and CDF files -----------------------------------------------------------
CDF_OK = "# size cumulative (percent)\n0 0\n1000 50\n10000 90\n100000 100\n"


def traffic(rng: random.Random) -> Case:
    """``netsim traffic`` (background flows from a size CDF): bad flag values or a broken CDF file."""
    flags_ = {"--load": "0.3", "--duration": "50us", "--start": "0ns", "--rate": "10Gbps"}
    cdf, invalid = CDF_OK, True
    what = rng.choice(("flag", "flag", "cdf", "ok", "hosts"))
    if what == "flag":
        flag = rng.choice(sorted(flags_))
        flags_[flag] = value = rng.choice({"--load": ("nan", "0", "1.5", "-1", "inf", "abc"),
                                           "--duration": ("nan", "0", "-1ms", "abc", "1e300s", "inf"),
                                           "--start": ("nan", "-1us", "abc", "1e300s"),
                                           "--rate": ("0", "nan", "abc", "-1Gbps", "inf", "1e400bps")}[flag])
        label = f"{flag}={value}"
    elif what == "cdf":
        cdf, label = rng.choice((("0 0\n1000 60\n500 100\n", "sizes decrease"), ("0 0\n1000 nan\n2000 100\n", "nan"),
                                 ("-5 0\n1000 100\n", "negative size"), ("0 0\n1000 150\n", "over 100 %"),
                                 ("0 0\n1000 80\n2000 40\n", "cumulative decreases"), ("", "empty"),
                                 ("0 0\n1e400 100\n", "infinite size"), ("a b c\n", "garbage")))
    elif what == "hosts":
        flags_["--hosts"], label = "left0,nosuch", "unknown host"
    else:
        label, invalid = "valid", False
    argv = ["traffic", "{d}/cdf.txt", "--out", "{d}/bg.csv", "--topology", "{d}/topo.yaml", "--seed", "1"]
    for k, v in flags_.items():
        argv.append(f"{k}={v}")
    return Case("traffic", label, tuple(argv), (("cdf.txt", cdf.encode()), ("topo.yaml", _dump(DUMBBELL))), invalid)


__all__ = ["traffic", "builder_expr", "workload_values", "workload_trees", "flags", "sweep", "WORKLOADS"]
