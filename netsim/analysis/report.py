"""A self-contained HTML report (``report.html``) of one run or a comparison.

Sections in this order (a section without data says so): summary, jobs
(cluster runs only: per-job times, slowdowns and shared links), fct,
fct-groups, slowdown, queues, pfc, cc, utilization, traffic, breakdown,
timeline, messages, comparison. The training-only sections (breakdown,
timeline, messages) are left out of a report whose runs are all flow-list runs
(``netsim flows``), and the page says so. Times in tables are shown with a
unit (ns, µs, ms, s), byte counts as integers. The page carries no timestamp
and no absolute path, so the same runs give the same bytes. Images are PNGs embedded as base64
``data:`` URIs, so the file can be mailed or attached to an issue as is.
A run that did not complete (:func:`netsim.analysis.io.run_status`) gets a
banner saying so. Left out: interactivity (open ``trace.json`` in Perfetto for that).
"""
from __future__ import annotations

import base64
import html
import io
import os

import pandas as pd

from . import plots
from ..errors import InputError
from ..records import atomic_output
from .io import Run, load_run
from .links import link_utilization, throughput
from .metrics import fct_table, iteration_breakdown, pfc_pause_table, queue_table, rank_busy_time
from .traffic import group_kinds, message_size_stats, message_sizes, traffic_matrix, traffic_matrix_change

SECTIONS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"), ("fct", "Flow completion times"), ("fct-groups", "FCT by parallelism / tag"),
    ("slowdown", "Slowdown by flow size"), ("queues", "Queues"), ("pfc", "PFC pauses"),
    ("cc", "Congestion control state"), ("utilization", "Throughput / link utilization"),
    ("traffic", "Traffic matrix"), ("breakdown", "Iteration time breakdown"),
    ("timeline", "Timeline of one iteration"), ("messages", "Message sizes"), ("comparison", "Comparison"),
)

SUMMARY_KEYS = ("status", "flows", "completed", "bytes_delivered", "drops", "ecn_marks", "pfc_pauses", "pauses",
                "cnps", "retransmitted_bytes", "simulated_time_ns", "sim_time_ns", "events", "iteration_time_s",
                "apnet_iteration_time_s", "samples_per_s", "jain_fairness", "sim_events", "wall_time_s")

_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em auto;padding:0 1em;max-width:1360px;color:#222;box-sizing:border-box}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;margin-top:2em}
.tw{overflow-x:auto;max-width:100%}table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
th{background:#f4f4f4}img{max-width:100%;margin:.5em 0}.none{color:#888;font-style:italic}nav a{margin-right:.8em}
.incomplete{background:#fff3cd;border:1px solid #e0b100;padding:.5em 1em;font-weight:bold}"""


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return f'<img alt="{html.escape(fig.axes[0].get_title() if fig.axes else "figure")}" ' \
           f'src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode("ascii")}">'


TRAINING_SECTIONS = ("breakdown", "timeline", "messages")
#: shown after the summary only when a run is a cluster run (summary.json has ``jobs``: netsim.cluster)
CLUSTER_SECTION = ("jobs", "Jobs (cluster run)")


def fmt_ns(v) -> str:
    """A time in ns as text with a unit.

    >>> fmt_ns(1_234_567), fmt_ns(850), fmt_ns(float("nan"))
    ('1.235 ms', '850 ns', '')
    """
    if v is None or v != v:
        return ""
    v = float(v)
    for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if abs(v) >= div:
            return f"{v / div:.4g} {unit}"
    return f"{v:.4g} ns"


def _formatters(df: pd.DataFrame) -> dict:
    """Column formatters: ``*_ns`` as times with a unit, ``*bytes*`` and counts as integers."""
    out = {}
    for c in df.columns:
        name = str(c)
        if name.endswith("_ns") and pd.api.types.is_numeric_dtype(df[c]):
            out[c] = fmt_ns
        elif ("bytes" in name or name in ("flows", "count", "pauses")) and pd.api.types.is_numeric_dtype(df[c]):
            out[c] = lambda v: "" if v != v else f"{int(round(float(v))):,}"
    return out


def _table(df: pd.DataFrame, max_rows: int = 40) -> str:
    if df is None or not len(df):
        return '<p class="none">no data</p>'
    more = f"<p class='none'>{len(df) - max_rows} more rows not shown</p>" if len(df) > max_rows else ""
    head = df.head(max_rows)
    body = head.to_html(formatters=_formatters(head), float_format=lambda v: f"{v:.4g}", border=0, na_rep="")
    return f'<div class="tw">{body}</div>' + more


def _is_flow_list_run(run: Run) -> bool:
    """A ``netsim flows`` run: no operations and no iteration time in its summary."""
    return not len(run.ops) and "iteration_time_s" not in run.summary


def _h3(run: Run, multi: bool) -> str:
    return f"<h3>{html.escape(run.label)}</h3>" if multi else ""


def _summary(runs) -> str:
    rows = {}
    for r in runs:
        s = r.summary
        rows[r.label] = {k: s[k] for k in SUMMARY_KEYS if k in s and not isinstance(s[k], (dict, list))}
        rows[r.label].setdefault("flows_in_fct", len(r.fct))
        rows[r.label].setdefault("ops", len(r.ops))
    return _table(pd.DataFrame.from_dict(rows, orient="index"))


def _jobs(run: Run) -> str:
    """A cluster run's per-job table (time, slowdown, breakdown) and its most shared links."""
    rows = {}
    for name, j in run.summary["jobs"].items():
        rows[name] = {"workload": j.get("workload"), "gpus": len(j.get("gpus", ())), "placement": j.get("placement"),
                      "start_ns": j.get("start_ns"), "iterations": j.get("iterations"),
                      "iteration_time_s": j.get("iteration_time_s"), "slowdown": j.get("slowdown"),
                      **{f"{k}_s": v for k, v in j.get("breakdown_s", {}).items() if v}}
    out = _table(pd.DataFrame.from_dict(rows, orient="index"))
    path = os.path.join(run.path or "", "interference.csv")
    if run.path and os.path.exists(path):
        inter = pd.read_csv(path)
        if len(inter):
            inter = inter.assign(bytes_min=inter[["bytes_a", "bytes_b"]].min(axis=1))
            top = inter.sort_values("bytes_min", ascending=False, kind="stable").drop(columns="bytes_min")
            top = top.set_index(["job_a", "job_b"])
            out += "<p>Links shared by two jobs (interference.csv), most bytes first:</p>" + _table(top, 20)
    return out


def run_seed(run: Run, seed: int | None = None) -> int:
    """``seed`` if given, else the seed the run recorded in its summary.json (0 if none)."""
    return int(seed) if seed is not None else int(run.summary.get("seed") or 0)


def _section_bodies(runs: list[Run], graph=None, seed: int | None = None) -> dict[str, str]:
    multi = len(runs) > 1
    out = {k: "" for k, _ in SECTIONS}
    out["summary"] = _summary(runs)
    out["jobs"] = "".join(_h3(r, multi) + _jobs(r) for r in runs if isinstance(r.summary.get("jobs"), dict))
    with_fct = [r for r in runs if len(r.fct)]
    if with_fct:
        out["fct"] = _png(plots.fct_cdf(with_fct)) + "".join(
            _h3(r, multi) + _table(fct_table(r.fct, "size")) for r in with_fct)
        out["slowdown"] = _png(plots.slowdown_by_size(with_fct))
        for r in with_fct:
            kinds = group_kinds(r.fct)
            col = "group_kind" if (kinds != "").any() else ("tag" if (r.fct["tag"] != "").any() else None)
            if col:
                f = r.fct.assign(group_kind=kinds) if col == "group_kind" else r.fct
                out["fct-groups"] += _h3(r, multi) + _table(fct_table(f, col))
    for r in runs:
        if len(r.queues):
            qt = queue_table(r.queues).sort_values("queue_max_bytes", ascending=False, kind="stable")
            out["queues"] += _h3(r, multi) + _png(plots.queue_timeseries(r.queues, title=f"Queues — {r.label}")) + _table(qt, 20)
        if len(r.pfc):
            out["pfc"] += _h3(r, multi) + _png(plots.pfc_pause_bar(r)) + _table(pfc_pause_table(r.pfc, r.end_ns))
        if len(r.cc):
            out["cc"] += _h3(r, multi) + "".join(
                _png(plots.cc_timeseries(r.cc, m, title=f"{m} — {r.label}"))
                for m in ("cwnd_bytes", "rate_bps") if r.cc[m].notna().any())
        if len(r.fct):
            try:
                util = link_utilization(r.fct, graph, seed=run_seed(r, seed)) if graph is not None else None
                title = "Link utilization"
            except Exception:  # noqa: BLE001 - mapping flows to a graph is best effort here
                util = None
            kw = {}
            if util is None:
                util = throughput(r.fct, by="src") / 1e9
                title, kw = "Egress throughput per node", {"value_label": "Gbit/s", "ylabel": "node"}
            out["utilization"] += _h3(r, multi) + _png(plots.utilization_heatmap(util, title=f"{title} — {r.label}", **kw))
        tm = traffic_matrix(r)
        if tm.size:
            ch = traffic_matrix_change(r)
            out["traffic"] += _h3(r, multi) + _png(plots.traffic_matrix_heatmap(
                tm, title=f"Traffic matrix, all iterations — {r.label}")) + \
                ("<p>Change between consecutive iterations:</p>" + _table(ch) if len(ch) else "")
        if r.summary.get("breakdown_s"):
            out["breakdown"] += _h3(r, multi) + _table(iteration_breakdown(r.summary))
        if len(r.ops):
            out["timeline"] += _h3(r, multi) + _png(plots.gantt(r.ops)) + _table(rank_busy_time(r.ops, int(r.ops["iteration"].min())), 16)
            dist = message_sizes(r)
            out["messages"] += _h3(r, multi) + _png(plots.message_size_cdf(dist)) + _table(message_size_stats(dist))
    if any(r.summary.get("breakdown_s") for r in runs):
        out["breakdown"] = _png(plots.breakdown_bar(runs)) + out["breakdown"]
    if multi:
        rows = {}
        for r in runs:
            t = fct_table(r.fct, None).iloc[0]
            rows[r.label] = {"flows": len(r.fct), "fct_p50_ns": t["fct_p50_ns"], "fct_p99_ns": t["fct_p99_ns"],
                             "slowdown_p99": t["slowdown_p99"],
                             "drops": r.summary.get("drops"), "iteration_time_s": r.summary.get("iteration_time_s")}
        out["comparison"] = _png(plots.compare_runs(runs)) + _table(pd.DataFrame.from_dict(rows, orient="index"))
    else:
        out["comparison"] = '<p class="none">a single run: pass several run directories to compare them</p>'
    for k in out:
        if not out[k]:
            out[k] = '<p class="none">no data for this section in the run(s)</p>'
    return out


def render_report(runs: list[Run], title: str | None = None, graph=None, seed: int | None = None) -> str:
    """The report's HTML text (deterministic: no timestamp, no absolute path)."""
    title = title or ("netsim report: " + ", ".join(r.label for r in runs))
    bodies = _section_bodies(runs, graph=graph, seed=seed)
    flow_lists = all(_is_flow_list_run(r) for r in runs)
    clusters = any(isinstance(r.summary.get("jobs"), dict) for r in runs)
    shown = [(k, t) for k, t in SECTIONS if not (flow_lists and k in TRAINING_SECTIONS)]
    if clusters:
        shown.insert(1, CLUSTER_SECTION)
    nav = " ".join(f'<a href="#{k}">{html.escape(t)}</a>' for k, t in shown)
    note = (f"<p class='none'>Flow-list run{'s' if len(runs) > 1 else ''}: the training sections "
            f"({', '.join(TRAINING_SECTIONS)}) do not apply and are left out.</p>" if flow_lists else "")
    mapped = ("Flows are mapped onto links with the run's topology." if graph is not None else
              "No topology given: utilization is shown as egress throughput per node "
              "(pass <code>--topology</code> to map flows onto links).")
    banner = "".join(f'<p class="incomplete">Incomplete run {html.escape(r.label)}: {html.escape(r.status)}. '
                     "The report shows what it had finished.</p>" for r in runs if not r.complete)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>",
             f"<p>Runs: {', '.join(html.escape(r.label) for r in runs)}. {mapped}</p>{banner}{note}<nav>{nav}</nav>"]
    for key, t in shown:
        parts.append(f'<section id="{key}"><h2>{html.escape(t)}</h2>{bodies[key]}</section>')
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(run_dirs, out: str | os.PathLike | None = None, title: str | None = None,
                 graph=None, seed: int | None = None) -> str:
    """Load run directories (or :class:`Run` objects), write the HTML report, return its path.

    Default ``out``: ``report.html`` in the run directory (one run) or in the
    current directory (several); an existing folder as ``out`` gets ``report.html`` inside.
    """
    runs = [r if isinstance(r, Run) else load_run(r) for r in run_dirs]
    labels = [r.label for r in runs]
    for i, r in enumerate(runs):  # make labels unique (e.g. two dirs both named "out")
        if labels.count(r.label) > 1:
            r.label = f"{r.label} ({i + 1})"
    if out is None:
        out = os.path.join(runs[0].path, "report.html") if len(runs) == 1 and runs[0].path else "report.html"
    out = os.fspath(out)
    if os.path.isdir(out):  # a folder: the report goes inside it
        out = os.path.join(out, "report.html")
    text = render_report(runs, title=title, graph=graph, seed=seed)
    try:
        d = os.path.dirname(out)
        if d:
            os.makedirs(d, exist_ok=True)
        with atomic_output(out, encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise InputError(f"cannot write the report ({exc.strerror})", where="--out", value=out,
                         accepted="a writable file path (or a folder, to write report.html in it)") from None
    return out
