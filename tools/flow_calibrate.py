"""Calibrate the flow backend's congestion-control model against the packet backend.

``python tools/flow_calibrate.py [--cc none,dcqcn,cubic,dctcp] [--quick] [--dcqcn] [--table]``
(from a checkout: the scenarios are in ``tests/validation/flow_scenarios.py``)

For every algorithm it runs, on the packet backend:

1. **efficiency** — ``N`` long flows started together across a dumbbell's
   100 Gbps bottleneck (N = 2, 4, 8). With ``W`` the wire bytes of all flows,
   ``C`` the bottleneck rate and ``λ`` the lone-flow latency term
   (ideal FCT − wire/C of one flow), the link was busy for
   ``T_last − λ`` and would have needed ``W / C``; efficiency =
   ``(W / C) / (T_last − λ)``, averaged over N.
2. **start-up ramp** — a lone flow of 100 KB, 1 MB and 10 MB: the measured
   ``fct − ideal`` against the fluid slow-start penalty of
   :meth:`CCModel.ramp_ps` at scale 1; ``ramp_scale`` = least-squares ratio
   (0 for algorithms without a ramp in the model).

3. **DCQCN check** (``--dcqcn``) — DCQCN is not a fitted efficiency but the
   algorithm's own law on fluid FIFO queues (``netsim.backends.flow.dcqcnfluid``); the same
   dumbbell runs on both backends compare the efficiency and the number of
   CNPs per flow (the length of the cut phase), for the tick periods given.

It prints a table and the values to put in ``netsim.backends.flow.ccmodel.MODEL_TABLES``
(documented in docs/flow-backend.md). It never edits code. The agreement
tests use other scenarios (incast, permutation, collectives, training), so
they check the calibration rather than repeat it.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "validation"))   # flow_scenarios

from flow_scenarios import load_graph, run_flows_on  # noqa: E402

from netsim.backends.flow.ccmodel import resolve_model  # noqa: E402

LINK_BPS = 100e9


def efficiency(cc: str, ns=(2, 4, 8), size_bytes: int = 4_000_000, params: dict | None = None) -> dict:
    """Aggregate efficiency of ``cc`` on a shared dumbbell bottleneck (packet backend)."""
    out = {}
    for n in ns:
        g = load_graph(f"dumbbell:n_left={n},n_right={n}")
        flows = [(f"left{i}", f"right{i}", size_bytes, 0) for i in range(n)]
        recs, stats, wall = run_flows_on("packet", g, flows, cc=cc, params=params)
        lone, _, _ = run_flows_on("packet", g, flows[:1], cc=cc, params=params)
        p = _net_params(params)
        mtu, hdr = p["mtu_bytes"], p["header_bytes"]
        wire_one = size_bytes * mtu / (mtu - hdr)
        t_one_ns = wire_one * 8 / LINK_BPS * 1e9
        latency_ns = recs[0].ideal_fct_ns - t_one_ns
        last = max(r.end_ns for r in recs)
        eff = (n * t_one_ns) / (last - latency_ns)
        out[str(n)] = {"efficiency": round(eff, 4), "last_ns": last, "lone_fct_ns": lone[0].fct_ns,
                  "ideal_ns": recs[0].ideal_fct_ns, "drops": stats.get("drops", 0), "wall_s": round(wall, 2)}
    out["mean"] = round(statistics.fmean(v["efficiency"] for k, v in out.items() if k != "mean"), 4)
    return out


def ramp(cc: str, sizes=(100_000, 1_000_000, 10_000_000), params: dict | None = None) -> dict:
    """Measured lone-flow extra time vs the model's slow-start penalty at scale 1."""
    from netsim.backends.flow.backend import FlowBackend  # noqa: F401  (registers "flow")
    g = load_graph("dumbbell:n_left=1,n_right=1")
    model = resolve_model(cc, {cc: {"flow_ramp_scale": 1.0}})
    p = _net_params(params)
    mtu, hdr = p["mtu_bytes"], p["header_bytes"]
    rate = LINK_BPS / 8 / 1e12            # bytes per ps
    from netsim.topology import Router
    path = Router(g).path("left0", "right0", 0)
    rtt_ps = 0.0
    for a, b in zip(path, path[1:]):
        e = g.edges[a, b]
        rtt_ps += 2 * e["delay_ns"] * 1000 + (mtu + p.get("ack_bytes", 64)) * 8e12 / e["rate_bps"]
    rows = []
    for s in sizes:
        recs, stats, wall = run_flows_on("packet", g, [("left0", "right0", s, 0)], cc=cc, params=params)
        measured = recs[0].fct_ns - recs[0].ideal_fct_ns
        modelled = model.ramp_ps(s * mtu / (mtu - hdr), rate, rtt_ps, mtu) / 1000
        rows.append({"size_bytes": s, "extra_ns": measured, "model_scale1_ns": round(modelled, 1)})
    num = sum(r["extra_ns"] * r["model_scale1_ns"] for r in rows)
    den = sum(r["model_scale1_ns"] ** 2 for r in rows)
    return {"rows": rows, "ramp_scale": round(num / den, 3) if den > 0 else 0.0}


def dcqcn_check(ns=(2, 4, 8), size_bytes: int = 4_000_000, ticks_ns=(2_000,), preset: str | None = None) -> list[dict]:
    """Fluid DCQCN vs packet DCQCN on the dumbbell: efficiency and CNPs per flow (``preset``: DCQCN's)."""
    cp = {"dcqcn": {"preset": preset}} if preset else None
    from netsim.backends.flow.backend import FlowBackend  # noqa: F401  (registers "flow")
    rows = []
    for n in ns:
        g = load_graph(f"dumbbell:n_left={n},n_right={n}")
        flows = [(f"left{i}", f"right{i}", size_bytes, 0) for i in range(n)]
        p = _net_params(None)
        wire_one = size_bytes * p["mtu_bytes"] / (p["mtu_bytes"] - p["header_bytes"])
        t_one_ns = wire_one * 8 / LINK_BPS * 1e9

        def eff(recs):
            lat = recs[0].ideal_fct_ns - t_one_ns
            return (n * t_one_ns) / (max(r.end_ns for r in recs) - lat)
        pk, _, _ = run_flows_on("packet", g, flows, cc="dcqcn", cc_params=cp)
        row = {"n": n, "packet_eff": round(eff(pk), 4),
               "packet_cnps_per_flow": round(statistics.fmean(r.cnps_received for r in pk), 2)}
        for t in ticks_ns:
            fl, st, _ = run_flows_on("flow", g, flows, cc="dcqcn", params={"flow_dcqcn_tick_ns": t}, cc_params=cp)
            row[f"flow_eff_tick{t // 1000}us"] = round(eff(fl), 4)
            row[f"flow_cnps_per_flow_tick{t // 1000}us"] = round(st["dcqcn_cnps"] / n, 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def agreement_table(ccs=("none", "dcqcn", "dcqcn:paper", "cubic")) -> list[str]:
    """Markdown rows comparing flow and packet backends on the validation scenarios.

    An entry ``ALGO:PRESET`` runs ``ALGO`` with ``--cc-param preset=PRESET``.
    """
    from flow_scenarios import compare_fct, dumbbell_long, incast, p99_fct_ns, permutation
    rows = ["| scenario | cc | flows | median err | p95 err | mean FCT err | last compl. err "
            "| p99 flow / packet (us) | packet drops |",
            "|---|---|---|---|---|---|---|---|---|"]
    sets = [("dumbbell 4 x 2 MB", [dumbbell_long(4, 2_000_000)]),
            ("incast 16-to-1 x 1 MB", [incast(16, 1_000_000)]),
            ("permutation 16 x 2 MB, seeds 1-4", [permutation(4, 2, 4, 2_000_000, seed=k) for k in range(1, 5)])]
    for name, scs in sets:
        for label in ccs:
            cc, _, preset = label.partition(":")
            cp = {cc: {"preset": preset}} if preset else None
            F, P, drops = [], [], 0
            for sc in scs:
                g = load_graph(sc.topology)
                f, _, _ = run_flows_on("flow", g, sc.flows, cc=cc, cc_params=cp)
                p, st, _ = run_flows_on("packet", g, sc.flows, cc=cc, cc_params=cp)
                F += f
                P += p
                drops += st.get("drops", 0)
            c = compare_fct(F, P)
            rows.append(f"| {name} | {label} | {c['flows']} | {c['median_rel_err']:.1%} | {c['p95_rel_err']:.1%} "
                        f"| {c['mean_fct_rel_err']:.1%} | {c['last_completion_rel_err']:.1%} "
                        f"| {p99_fct_ns(F) / 1000:.0f} / {p99_fct_ns(P) / 1000:.0f} | {drops} |")
            print(rows[-1], flush=True)
    return rows


def _net_params(params: dict | None) -> dict:
    from netsim.network.params import resolve_params
    return resolve_params(params or {})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default="none,dcqcn,cubic,dctcp")
    ap.add_argument("--quick", action="store_true", help="N = 2, 4 only and smaller flows")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--table", action="store_true",
                    help="instead: print the flow-vs-packet agreement table (markdown)")
    ap.add_argument("--dcqcn", action="store_true",
                    help="instead: check the fluid DCQCN model against packet DCQCN on the dumbbell")
    args = ap.parse_args(argv)
    if args.dcqcn:
        dcqcn_check(ticks_ns=(1_000, 2_000, 5_000, 10_000))
        return 0
    if args.table:
        agreement_table()
        return 0
    results = {}
    for cc in [c.strip() for c in args.cc.split(",") if c.strip()]:
        ns = (2, 4) if args.quick else (2, 4, 8)
        size = 2_000_000 if args.quick else 4_000_000
        eff = efficiency(cc, ns=ns, size_bytes=size)
        rp = ramp(cc) if resolve_model(cc).init_cwnd_pkts else {"rows": [], "ramp_scale": 0.0}
        results[cc] = {"efficiency": eff, "ramp": rp}
        print(f"{cc:6s} efficiency={eff['mean']:.4f} "
              + " ".join(f"N={k}:{v['efficiency']:.4f}(drops {v['drops']})" for k, v in eff.items() if k != "mean")
              + f"  ramp_scale={rp['ramp_scale']}", flush=True)
        for r in rp["rows"]:
            print(f"       lone {r['size_bytes']:>9d} B: extra {r['extra_ns']} ns, model(scale 1) "
                  f"{r['model_scale1_ns']} ns")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2, sort_keys=True, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
