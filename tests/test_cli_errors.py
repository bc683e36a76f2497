"""Bad input through every CLI command: exit status 2, one stderr line, no traceback.

Table-driven: each case is a command line (run in-process through
:func:`netsim.cli.main`) plus the strings the single error line must contain
(the file, field or value the user has to fix). The bad files are written
into a per-module temporary folder; ``{T}`` in an argument is replaced by it.
Cases marked ``xfail(strict=True)`` are defects reported to the lead (they
live in code QA may not edit); when fixed, the strict xfail turns into a
failure so the mark gets removed.
"""
from __future__ import annotations

import os
import textwrap

import pytest

from netsim.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPO = os.path.join(ROOT, "topologies")
WL = os.path.join(ROOT, "workloads")
DUMBBELL = os.path.join(TOPO, "dumbbell.yaml")
GPU8 = "gpu_cluster:servers=1,gpus_per_server=8"
SMALL_WL = os.path.join(WL, "gpt-1.5b-t2p2d2-small.yaml")
DENSE_WL = os.path.join(WL, "bert-large-small.yaml")

_TOPO_HEAD = "link_defaults: {kind: ethernet, delay_ns: 1us}\n"
_TOPO_NODES = """\
nodes:
  - {name: a, kind: host}
  - {name: b, kind: host}
  - {name: sw, kind: switch}
"""


def _topo(links: str, nodes: str = _TOPO_NODES) -> str:
    return _TOPO_HEAD + nodes + "links:\n" + textwrap.dedent(links)


_WL_BASE = """\
name: bad
model: {preset: gpt-1.5b, layers: 4, hidden: 512, heads: 8, seq_len: 256, vocab: 8192}
training: {global_batch: 8, micro_batch: 1, precision: fp16}
parallelism: {tp: 2, pp: 2, dp: 2}
"""
_MOE_BASE = """\
name: badmoe
model:
  preset: gpt-350m
  layers: 4
  hidden: 256
  heads: 4
  seq_len: 256
  vocab: 8192
  moe: {experts: 8, top_k: 2, every: 2%s}
training: {global_batch: 16, micro_batch: 2}
parallelism: {dp: 8, ep: %d%s}
"""

FILES = {
    # topologies
    "two_parts.yaml": _TOPO_HEAD + """\
nodes:
  - {name: a, kind: host}
  - {name: b, kind: host}
  - {name: c, kind: host}
  - {name: d, kind: host}
  - {name: sw1, kind: switch}
  - {name: sw2, kind: switch}
links:
  - {src: a, dst: sw1, rate_bps: 10Gbps}
  - {src: b, dst: sw1, rate_bps: 10Gbps}
  - {src: c, dst: sw2, rate_bps: 10Gbps}
  - {src: d, dst: sw2, rate_bps: 10Gbps}
""",
    "node_kind.yaml": _topo("""\
  - {src: a, dst: sw, rate_bps: 10Gbps}
  - {src: b, dst: sw, rate_bps: 10Gbps}
""", nodes=_TOPO_NODES.replace("{name: sw, kind: switch}", "{name: sw, kind: router}")),
    "link_kind.yaml": _topo("""\
  - {src: a, dst: sw, rate_bps: 10Gbps, kind: wifi}
  - {src: b, dst: sw, rate_bps: 10Gbps}
"""),
    "no_rate.yaml": _topo("""\
  - {src: a, dst: sw}
  - {src: b, dst: sw, rate_bps: 10Gbps}
"""),
    "zero_rate.yaml": _topo("""\
  - {src: a, dst: sw, rate_bps: 0}
  - {src: b, dst: sw, rate_bps: 10Gbps}
"""),
    "bad_unit.yaml": _topo("""\
  - {src: a, dst: sw, rate_bps: 10Gbsp}
  - {src: b, dst: sw, rate_bps: 10Gbps}
"""),
    "dup_node.yaml": _topo("""\
  - {src: a, dst: sw, rate_bps: 10Gbps}
""", nodes=_TOPO_NODES + "  - {name: a, kind: host}\n"),
    # flow files (on the shipped dumbbell)
    "ok.csv": "src,dst,size_bytes,start_ns\nleft0,right0,100KB,0\n",
    "unknown_node.csv": "src,dst,size_bytes,start_ns\nleft0,nowhere,1000,0\n",
    "neg_size.csv": "src,dst,size_bytes,start_ns\nleft0,right0,-5,0\n",
    "zero_size.csv": "src,dst,size_bytes,start_ns\nleft0,right0,0,0\n",
    "same.csv": "src,dst,size_bytes,start_ns\nleft0,left0,1000,0\n",
    "unreach.csv": "src,dst,size_bytes,start_ns\na,c,1000,0\n",
    "empty.csv": "",
    "headerless.csv": "left0,right0,1000,0\n",
    "size_unit.csv": "src,dst,size_bytes,start_ns\nleft0,right0,10Gbsp,0\n",
    "frac_size.csv": "src,dst,size_bytes,start_ns\nleft0,right0,1.5,0\n",
    "neg_start.csv": "src,dst,size_bytes,start_ns\nleft0,right0,1000,-1us\n",
    "flow_cc.csv": "src,dst,size_bytes,start_ns,cc\nleft0,right0,1000,0,bbr9\n",
    "flow_prio.csv": "src,dst,size_bytes,start_ns,priority\nleft0,right0,1000,0,12\n",
    "dup_col.csv": "src,dst,size_bytes,start_ns,src\nleft0,right0,1000,0,left1\n",
    "unknown_col.csv": "src,dst,size_bytes,start_ns,weight\nleft0,right0,1000,0,3\n",
    "short_row.csv": "src,dst,size_bytes,start_ns\nleft0,right0,1000\n",
    # workloads
    "wl_unknown_key.yaml": _WL_BASE + "bogus_section: 1\n",
    "wl_unknown_train_key.yaml": _WL_BASE.replace("precision: fp16", "precision: fp16, epochs: 3"),
    "wl_gpus_placed.yaml": _WL_BASE + "placement: {gpus: [s0.gpu0, s0.gpu1, s0.gpu2]}\n",
    "wl_layers_pp.yaml": _WL_BASE.replace("layers: 4", "layers: 3"),
    "wl_batch.yaml": _WL_BASE.replace("global_batch: 8", "global_batch: 7"),
    "wl_algo.yaml": _WL_BASE + "collectives: {dp: {algorithm: butterfly}}\n",
    "wl_moe_key.yaml": _MOE_BASE % (", gating: magic", 8, ""),
    "wl_zero_stage.yaml": _MOE_BASE % ("", 8, ", zero_stage: 7"),
    "wl_zero_key.yaml": _MOE_BASE % ("", 8, ", zero_offload: true"),
    "wl_ep_experts.yaml": _MOE_BASE.replace("experts: 8", "experts: 6") % ("", 4, ""),
    "wl_ep_dp.yaml": _MOE_BASE % ("", 3, ""),
    "wl_whatif_delay.yaml": _WL_BASE + "whatif: {inject_delay: {alltoall@ep: 1ms}}\n",
    "wl_whatif_link.yaml": _WL_BASE + "whatif: {fail_link: ['s0.gpu0:s0.gpu7@1us']}\n",
    "wl_whatif_key.yaml": _WL_BASE + "whatif: {slow_down: 2}\n",
    # sweeps
    "sweep_bad_axis.yaml": "command: flows\ntopology: %s\nflows: ok.csv\ngrid:\n  nosuch_axis.key: [1, 2]\n" % DUMBBELL,
    "sweep_unknown_field.yaml": "command: flows\ntopology: %s\nflows: ok.csv\nbogus: 1\n" % DUMBBELL,
    # other
    "not_json.yaml": "{{{ not yaml",
    "a_file": "not a directory\n",
    "hpcc_topo_bad_rate.txt": "3 1 2\n2\n0 2 10Gbsp 1000ns 0\n1 2 10Gbps 1000ns 0\n",
    "hpcc_flow_to_switch.txt": "1\n0 9 3 100 100 2.0\n",
    "hpcc_flow_count.txt": "2\n0 1 3 100 1000 2.0\n",
    # issue 14's error-message bullets
    "neg_delay.yaml": _topo("""\
  - {src: a, dst: sw, rate_bps: 10Gbps, delay_ns: -1us}
  - {src: b, dst: sw, rate_bps: 10Gbps}
"""),
    "lonely_nic.yaml": _topo("""\
  - {src: a, dst: sw, rate_bps: 10Gbps}
  - {src: b, dst: sw, rate_bps: 10Gbps}
""", nodes=_TOPO_NODES + "  - {name: n0, kind: nic}\n"),
    "ab.csv": "src,dst,size_bytes,start_ns\na,b,1000,0\n",
}

# (id, argv, substrings the error line must contain, xfail reason or None)
F = ["flows", DUMBBELL, "{T}/ok.csv", "--out", "{T}/out", "--quiet"]
R = ["run", GPU8, SMALL_WL, "--out", "{T}/out", "--backend", "analytic", "--quiet"]


def _flows(flowfile, *extra, topo=DUMBBELL):
    return ["flows", topo, flowfile, "--out", "{T}/out", "--quiet", *extra]


def _run(workload, *extra, topo=GPU8):
    return ["run", topo, workload, "--out", "{T}/out", "--backend", "analytic", "--quiet", *extra]


CASES = [
    # --- topology (netsim topo validate / show, and through flows/run) ---
    ("topo-two-components-flow", _flows("{T}/unreach.csv", topo="{T}/two_parts.yaml"),
     ["unreach.csv", "line 2", "'c'"], None),
    ("topo-node-kind", ["topo", "validate", "{T}/node_kind.yaml"], ["node_kind.yaml", "router"], None),
    ("topo-link-kind", ["topo", "validate", "{T}/link_kind.yaml"], ["link_kind.yaml", "wifi"], None),
    ("topo-missing-rate", ["topo", "validate", "{T}/no_rate.yaml"], ["no_rate.yaml", "rate_bps"], None),
    ("topo-zero-rate", ["topo", "show", "{T}/zero_rate.yaml"], ["zero_rate.yaml", "rate_bps"], None),
    ("topo-bad-unit", ["topo", "validate", "{T}/bad_unit.yaml"], ["bad_unit.yaml", "10Gbsp"], None),
    ("topo-dup-node", ["topo", "validate", "{T}/dup_node.yaml"], ["dup_node.yaml", "'a'"], None),
    ("topo-missing-file", ["topo", "validate", "{T}/nope.yaml"], ["nope.yaml"], None),
    ("topo-directory", ["topo", "show", "{T}"], ["{T}"], None),
    ("topo-bad-builder-arg", ["topo", "validate", "leaf_spine:leaves=4,bogus=2"], ["bogus"], None),
    ("topo-builder-zero-count", ["topo", "validate", "leaf_spine:leaves=0"], ["leaves", "0"], None),
    ("topo-builder-not-int", ["topo", "show", "leaf_spine:hosts_per_leaf=1.5"], ["hosts_per_leaf", "1.5"], None),
    ("topo-builder-arg-twice", ["topo", "validate", "leaf_spine:leaves=2,leaves=3"], ["leaves"], None),
    ("topo-builder-bad-unit", ["topo", "validate", "leaf_spine:host_rate_bps=10Gbsp"], ["host_rate_bps", "10Gbsp"],
     None),
    ("topo-hpcc-bad-rate", ["topo", "validate", "{T}/hpcc_topo_bad_rate.txt"],
     ["hpcc_topo_bad_rate.txt", "line 3", "10Gbsp"], None),
    ("topo-binary-file", ["topo", "validate", "{T}/binary.txt"], ["binary.txt", "text"], None),
    ("flows-binary-file", _flows("{T}/binary.csv"), ["binary.csv", "text"], None),
    ("run-binary-workload", _run("{T}/binary.yaml"), ["binary.yaml"], None),
    ("sweep-binary-file", ["sweep", "{T}/binary.yaml", "--out", "{T}/sw", "--dry-run"], ["binary.yaml"], None),
    ("topo-not-yaml", ["topo", "validate", "{T}/not_json.yaml"], ["not_json.yaml"], None),
    ("flows-bad-topology", _flows("{T}/ok.csv", topo="{T}/bad_unit.yaml"), ["bad_unit.yaml", "10Gbsp"], None),
    ("run-bad-topology", _run(SMALL_WL, topo="{T}/link_kind.yaml"), ["link_kind.yaml", "wifi"], None),
    # --- flow files ---
    ("flows-unknown-node", _flows("{T}/unknown_node.csv"), ["unknown_node.csv", "line 2", "nowhere"], None),
    ("flows-negative-size", _flows("{T}/neg_size.csv"), ["neg_size.csv", "size_bytes", "-5"], None),
    ("flows-zero-size", _flows("{T}/zero_size.csv"), ["zero_size.csv", "size_bytes", "0"], None),
    ("flows-empty", _flows("{T}/empty.csv"), ["empty.csv", "empty"], None),
    ("flows-headerless", _flows("{T}/headerless.csv"), ["headerless.csv", "line 1"], None),
    ("flows-size-unit", _flows("{T}/size_unit.csv"), ["size_unit.csv", "10Gbsp"], None),
    ("flows-hpcc-to-switch", _flows("{T}/hpcc_flow_to_switch.txt", topo=os.path.join(TOPO, "hpcc_small", "topology.txt")),
     ["hpcc_flow_to_switch.txt", "line 2", "'9'"], None),
    ("flows-hpcc-count", _flows("{T}/hpcc_flow_count.txt", topo=os.path.join(TOPO, "hpcc_small", "topology.txt")),
     ["hpcc_flow_count.txt", "line 1"], None),
    ("flows-fractional-size", _flows("{T}/frac_size.csv"), ["frac_size.csv", "line 2", "1.5"], None),
    ("flows-negative-start", _flows("{T}/neg_start.csv"), ["neg_start.csv", "start_ns", "-1us"], None),
    ("flows-cc-column", _flows("{T}/flow_cc.csv"), ["flow_cc.csv", "line 2", "field cc", "bbr9"], None),
    ("flows-priority-column", _flows("{T}/flow_prio.csv"), ["flow_prio.csv", "line 2", "priority", "12"], None),
    ("flows-column-twice", _flows("{T}/dup_col.csv"), ["dup_col.csv", "line 1", "src"], None),
    ("flows-unknown-column", _flows("{T}/unknown_col.csv"), ["unknown_col.csv", "line 1", "weight"], None),
    ("flows-short-row", _flows("{T}/short_row.csv"), ["short_row.csv", "line 2"], None),
    ("flows-missing-file", _flows("{T}/nope.csv"), ["nope.csv"], None),
    ("flows-directory", _flows("{T}"), ["{T}"], None),
    ("flows-missing-topology", _flows("{T}/ok.csv", topo="{T}/nope.yaml"), ["nope.yaml"], None),
    # --- options of flows ---
    ("flows-unknown-set", _flows("{T}/ok.csv", "--set", "nosuch_key=1"), ["nosuch_key"], None),
    ("flows-bad-set-unit", _flows("{T}/ok.csv", "--set", "buffer_bytes=10Gbsp"), ["buffer_bytes", "10Gbsp"], None),
    ("flows-unknown-cc", _flows("{T}/ok.csv", "--cc", "bbr9"), ["bbr9"], None),
    ("flows-unknown-cc-param", _flows("{T}/ok.csv", "--cc", "dcqcn", "--cc-param", "nosuch_param=1"),
     ["nosuch_param"], None),
    ("flows-unknown-backend", _flows("{T}/ok.csv", "--backend", "quantum"), ["quantum"], None),
    ("flows-missing-cc-params-file", _flows("{T}/ok.csv", "--cc", "dcqcn", "--cc-params-file", "{T}/nope.yaml"),
     ["nope.yaml"], None),
    ("flows-out-is-a-file", ["flows", DUMBBELL, "{T}/ok.csv", "--out", "{T}/a_file", "--quiet"], ["a_file"],
     None),
    ("flows-seed-not-int", _flows("{T}/ok.csv", "--seed", "abc"), ["--seed", "abc"],
     None),
    # --- netsim run ---
    ("run-unknown-set", _run(SMALL_WL, "--set", "nosuch_key=1"), ["nosuch_key"], None),
    ("flows-set-twice", _flows("{T}/ok.csv", "--set", "mtu_bytes=1000", "--set", "mtu_bytes=2000"),
     ["--set mtu_bytes", "twice", "mtu_bytes=2000"], None),
    ("run-cc-param-twice", _run(SMALL_WL, "--backend", "flow", "--cc", "dcqcn", "--cc-param", "dcqcn.g=0.5", "--cc-param", "dcqcn.g=0.25"),
     ["--cc-param", "twice"], None),
    ("run-unknown-cc", _run(SMALL_WL, "--cc", "bbr9"), ["bbr9"], None),
    ("run-unknown-cc-param", _run(SMALL_WL, "--cc", "dcqcn", "--cc-param", "nosuch_param=1"),
     ["nosuch_param"], None),
    ("run-unknown-backend", ["run", GPU8, SMALL_WL, "--out", "{T}/out", "--backend", "quantum", "--quiet"],
     ["quantum"], None),
    ("run-unknown-workload-key", _run("{T}/wl_unknown_key.yaml"), ["wl_unknown_key.yaml", "bogus_section"], None),
    ("run-unknown-training-key", _run("{T}/wl_unknown_train_key.yaml"), ["wl_unknown_train_key.yaml", "epochs"],
     None),
    ("run-unknown-workload-set", _run(SMALL_WL, "--workload-set", "training.epochs=3"), ["epochs"], None),
    ("run-gpus-placed", _run("{T}/wl_gpus_placed.yaml"), ["wl_gpus_placed.yaml", "placement.gpus"], None),
    ("run-too-few-gpus", _run(SMALL_WL, topo="gpu_cluster:servers=1,gpus_per_server=4"), ["8", "4"], None),
    ("run-layers-pp", _run("{T}/wl_layers_pp.yaml"), ["wl_layers_pp.yaml", "parallelism.pp"], None),
    ("run-batch", _run("{T}/wl_batch.yaml"), ["wl_batch.yaml", "7"], None),
    ("run-algorithm", _run("{T}/wl_algo.yaml"), ["wl_algo.yaml", "butterfly"], None),
    ("run-moe-key", _run("{T}/wl_moe_key.yaml"), ["wl_moe_key.yaml", "gating"], None),
    ("run-zero-stage", _run("{T}/wl_zero_stage.yaml"), ["wl_zero_stage.yaml", "zero_stage", "7"], None),
    ("run-zero-key", _run("{T}/wl_zero_key.yaml"), ["wl_zero_key.yaml", "zero_offload"], None),
    ("run-ep-experts", _run("{T}/wl_ep_experts.yaml"), ["wl_ep_experts.yaml", "parallelism.ep", "4"], None),
    ("run-ep-dp", _run("{T}/wl_ep_dp.yaml"), ["wl_ep_dp.yaml", "parallelism.ep", "3"], None),
    ("run-delay-no-op", _run(DENSE_WL, "--inject-delay", "alltoall@ep=1ms"), ["alltoall"], None),
    ("run-fail-no-link", _run(SMALL_WL, "--fail-link", "s0.gpu0:nowhere@1us"), ["nowhere"], None),
    ("run-fail-not-a-link", _run(SMALL_WL, "--fail-link", "s0.gpu0:s0.gpu5@1us"), ["s0.gpu5"], None),
    ("run-degrade-no-link", _run(SMALL_WL, "--degrade-link", "s0.gpu0:s0.gpu5=0.5@1us"), ["s0.gpu5"], None),
    ("run-whatif-delay-no-op", _run("{T}/wl_whatif_delay.yaml"), ["wl_whatif_delay.yaml", "whatif", "alltoall"], None),
    ("run-whatif-fail-no-link", _run("{T}/wl_whatif_link.yaml"), ["wl_whatif_link.yaml", "whatif", "s0.gpu7"], None),
    ("run-whatif-unknown-key", _run("{T}/wl_whatif_key.yaml"), ["wl_whatif_key.yaml", "slow_down"], None),
    ("run-out-is-a-file", ["run", GPU8, SMALL_WL, "--out", "{T}/a_file", "--backend", "analytic", "--quiet"],
     ["a_file"], None),
    ("run-missing-workload", _run("{T}/nope.yaml"), ["nope.yaml"], None),
    ("run-directory-workload", _run("{T}"), ["{T}"],
     None),
    ("run-missing-topology", _run(SMALL_WL, topo="{T}/nope.yaml"), ["nope.yaml"], None),
    ("run-not-yaml-workload", _run("{T}/not_json.yaml"), ["not_json.yaml"], None),
    # --- defaults / compare / report / sweep / bench ---
    ("defaults-unknown-cc", ["defaults", "--cc", "bbr9"], ["bbr9"], None),
    ("compare-missing-dir", ["compare", "{T}/nope_run"], ["nope_run"], None),
    ("compare-empty-dir", ["compare", "{T}/empty_run"], ["empty_run"], None),
    ("report-empty-dir", ["report", "{T}/empty_run", "--out", "{T}/r.html"], ["empty_run"], None),
    ("compare-file-not-dir", ["compare", "{T}/ok.csv"], ["ok.csv"], None),
    ("report-missing-dir", ["report", "{T}/nope_run", "--out", "{T}/r.html"], ["nope_run"], None),
    ("report-file-not-dir", ["report", "{T}/ok.csv", "--out", "{T}/r.html"], ["ok.csv"], None),
    ("report-wrong-topology", ["report", "{T}/run_ok", "--out", "{T}/r.html", "--topology",
                               os.path.join(TOPO, "leaf_spine_hosts.yaml")], ["run_ok", "left0"], None),
    ("sweep-missing-file", ["sweep", "{T}/nope_sweep.yaml", "--out", "{T}/sw", "--dry-run"], ["nope_sweep.yaml"],
     None),
    ("sweep-directory", ["sweep", "{T}", "--out", "{T}/sw", "--dry-run"], ["{T}"], None),
    ("sweep-unknown-field", ["sweep", "{T}/sweep_unknown_field.yaml", "--out", "{T}/sw", "--dry-run"],
     ["sweep_unknown_field.yaml", "bogus"], None),
    # (an invalid --set value inside a point is recorded as a failed point by design, docs/sweep.md)
    ("sweep-unknown-axis", ["sweep", "{T}/sweep_bad_axis.yaml", "--out", "{T}/sw", "--dry-run"],
     ["sweep_bad_axis.yaml", "nosuch_axis"], None),
    ("sweep-out-is-a-file", ["sweep", os.path.join(WL, "sweeps", "dcqcn_kmin_kmax_incast.yaml"), "--out",
                             "{T}/a_file", "--quiet"], ["--out", "a_file"], None),
    ("report-out-under-a-file", ["report", "{T}/run_ok", "--out", "{T}/a_file/r.html"], ["--out", "a_file"], None),
    ("bench-unknown-name", ["bench", "no_such_benchmark"], ["no_such_benchmark"], None),
    # --- issue 14's error-message bullets: the exact-ish line ---
    ("topo-negative-delay", ["topo", "validate", "{T}/neg_delay.yaml"],
     ["neg_delay.yaml", "field delay_ns", "must not be negative", "'-1us'"], None),
    ("run-out-existing-file", _run(SMALL_WL, topo=GPU8)[:3] + ["--out", "{T}/a_file", "--backend", "analytic"],
     ["--out {T}/a_file", "is an existing file, not a directory", "expected a directory"], None),
    ("flows-out-existing-file", ["flows", DUMBBELL, "{T}/ok.csv", "--out", "{T}/a_file"],
     ["--out {T}/a_file", "is an existing file"], None),
    ("run-workload-is-directory", _run("{T}"), ["WORKLOAD {T}: is a directory", "workload YAML file"], None),
    ("run-topology-is-directory", _run(SMALL_WL, topo="{T}"), ["TOPOLOGY {T}: is a directory"], None),
    ("flows-topology-is-directory", _flows("{T}/ok.csv", topo="{T}"), ["TOPOLOGY {T}: is a directory"], None),
    ("flows-flows-is-directory", _flows("{T}"), ["FLOWS {T}: is a directory", "CSV flow file"], None),
    ("run-workload-set-not-int", _run(SMALL_WL, "--workload-set", "parallelism.dp=abc"),
     ["--workload-set parallelism.dp", "'abc'", "integer >= 1"], None),
    ("topo-nic-without-link", ["topo", "validate", "{T}/lonely_nic.yaml"],
     ["lonely_nic.yaml", "node n0", "nic with no link"], None),
    ("flows-nic-without-link", _flows("{T}/ab.csv", topo="{T}/lonely_nic.yaml"),
     ["lonely_nic.yaml", "node n0"], None),
    ("run-did-you-mean", _run(SMALL_WL, "--workload-set", "paralelism.dp=2"),
     ["--workload-set paralelism", "expected one of name,", "; did you mean parallelism?"], None),
    ("run-too-few-gpus-wording", _run(SMALL_WL, topo="gpu_cluster:servers=1,gpus_per_server=4"),
     ["needs dp·tp·pp = 8 GPUs but the topology has 4;"], None),
    # --- what-if values (issue 15: inf and 1e300 were OverflowError tracebacks) ---
    ("run-straggler-inf", _run(SMALL_WL, "--straggler", "0=inf"), ["--straggler", "'inf'"], None),
    ("run-straggler-huge", _run(SMALL_WL, "--straggler", "0=1e300"), ["--straggler", "'1e300'"], None),
    ("run-straggler-superscript-rank", _run(SMALL_WL, "--straggler", "\u00b9=2"), ["--straggler", "bad rank"], None),
    ("run-degrade-inf", _run(SMALL_WL, "--degrade-link", "s0.gpu0:s0.gpu1=inf@1us"),
     ["--degrade-link", "'inf'"], None),
    # --- options a backend cannot honour ---
    ("flows-analytic-cc-param", _flows("{T}/ok.csv", "--backend", "analytic", "--cc", "dcqcn", "--cc-param", "g=0.5"),
     ["--cc-param g=0.5", "--backend analytic cannot honour it"], None),
    ("flows-analytic-packet-set", _flows("{T}/ok.csv", "--backend", "analytic", "--set", "pfc=off"),
     ["--set pfc", "--backend analytic cannot honour it", "mtu_bytes"], None),
    ("run-analytic-packet-set", _run(SMALL_WL, "--set", "buffer_bytes=1MB"),
     ["--set buffer_bytes", "--backend analytic cannot honour it"], None),
    ("run-analytic-cc-params-file", _run(SMALL_WL, "--cc-params-file", "{T}/ok.csv"),
     ["--cc-params-file", "--backend analytic cannot honour it"], None),
    ("report-bad-topology", ["report", "{T}/run_ok", "--out", "{T}/r.html", "--topology", "{T}/link_kind.yaml"],
     ["wifi"], None),
    # --- issue #14 QA: output paths name their flag; a failed link that cuts a pair names the failure ---
    ("export-chakra-out-is-file", ["export", "chakra", DENSE_WL, "--out", "{T}/ok.csv", "--quiet"],
     ["--out", "ok.csv", "existing file"], None),
    ("export-hpcc-out-is-dir", ["export", "hpcc-flows", "{T}/run_ok", "--out", "{T}", "--quiet"],
     ["--out", "is a directory"], None),
    ("export-hpcc-out-no-folder", ["export", "hpcc-flows", "{T}/run_ok", "--out", "{T}/nowhere/f.txt", "--quiet"],
     ["--out", "nowhere", "does not exist"], None),
    ("report-out-no-folder", ["report", "{T}/run_ok", "--out", "{T}/nowhere/r.html"],
     ["--out", "nowhere", "does not exist"], None),
    ("fail-link-cuts-a-pair", _run(DENSE_WL, "--fail-link", "s0.nic0:leaf0@1us", "--workload-set",
                                   "placement.gpus=[s0.gpu0,s1.gpu0,s2.gpu0,s3.gpu0]",
                                   topo=os.path.join(TOPO, "leaf_spine_64gpu.yaml")),
     ["--fail-link s0.nic0:leaf0@1000ns", "unreachable", "s1.gpu0"], None),
    # --- --seed on every command taking it: numpy's SeedSequence refuses negatives (it was a traceback) ---
    ("seed-negative-run", _run(DENSE_WL, "--seed", "-1", "--variability", "jitter=lognormal"),
     ["--seed", "-1", "0..9223372036854775807"], None),
    ("seed-too-large-run", _run(DENSE_WL, "--seed", str(2**63)), ["--seed", str(2**63)], None),
    ("seed-negative-flows", _flows("{T}/ok.csv", "--seed", "-5"), ["--seed", "-5"], None),
    ("seed-not-int-traffic", ["traffic", "--seed", "1.5"], ["--seed", "1.5"], None),
    ("seed-negative-export", ["export", "chakra", SMALL_WL, "--seed", "-1"], ["--seed", "-1"], None),
    ("seed-negative-report", ["report", "{T}/run_ok", "--seed", "-2"], ["--seed", "-2"], None),
]


@pytest.fixture(scope="module")
def bad_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    for name, text in FILES.items():
        (d / name).write_text(text, encoding="utf-8")
    for name in ("binary.txt", "binary.csv", "binary.yaml"):
        (d / name).write_bytes(bytes(range(256)) * 4)
    (d / "empty_run").mkdir()
    assert main(["flows", DUMBBELL, str(d / "ok.csv"), "--out", str(d / "run_ok"), "--backend", "analytic",
                 "--quiet"]) == 0
    return str(d)


def _params():
    out = []
    for cid, argv, needles, xfail in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=f"reported to lead: {xfail}")] if xfail else []
        out.append(pytest.param(argv, needles, id=cid, marks=marks))
    return out


@pytest.mark.parametrize("argv, needles", _params())
def test_bad_input_exits_2_with_one_line(argv, needles, bad_dir, capsys):
    argv = [a.replace("{T}", bad_dir) for a in argv]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse usage errors
        rc = exc.code
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, f"exit status {rc}; stderr:\n{err}"
    assert "Traceback" not in err
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{err}"
    line = lines[0]
    assert line.startswith(f"netsim {argv[0]}: error:") or line.startswith("netsim: error:") \
        or line.startswith(f"usage: netsim {argv[0]}") \
        or line.startswith(f"netsim {' '.join(argv[:2])}: error:"), line   # a sub-subcommand (export chakra)
    for needle in needles:
        assert needle.replace("{T}", bad_dir) in line, f"{needle!r} not named in: {line}"


def test_unknown_backend_is_blamed_on_backend_not_on_set(capsys):
    from netsim.cli import main as _main
    assert _main(["flows", "gpu_ring:gpus=4", "topologies/hpcc_small/flow.txt", "--backend", "pkt", "--out", "/tmp/x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("netsim flows: error: --backend: unknown backend (got 'pkt')") and "--set" not in err


def test_flows_quiet_prints_nothing_and_report_out_makes_no_folder(bad_dir, capsys, tmp_path):
    """Issue #14 QA: ``flows --quiet`` printed its summary line; ``report --out`` created missing folders."""
    assert main(["flows", DUMBBELL, os.path.join(bad_dir, "ok.csv"), "--out", str(tmp_path / "q"), "--backend",
                 "analytic", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    assert main(["flows", DUMBBELL, os.path.join(bad_dir, "ok.csv"), "--out", str(tmp_path / "v"), "--backend",
                 "analytic"]) == 0
    assert capsys.readouterr().out.startswith("flows 1  completed 1")
    assert main(["report", str(tmp_path / "q"), "--out", str(tmp_path / "no" / "r.html")]) == 2
    assert not (tmp_path / "no").exists()
