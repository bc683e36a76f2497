"""Plot functions: check the Figure objects (axes, labels, lines), not pixels."""
import os

import pytest
from matplotlib.figure import Figure

from netsim.analysis import load_run, throughput, traffic_matrix
from netsim.analysis import plots
from netsim.analysis.traffic import message_sizes


def test_fct_cdf(flows_dir, tmp_path):
    run = load_run(flows_dir)
    out = tmp_path / "cdf.png"
    fig = plots.fct_cdf([run, run], path=out)
    assert isinstance(fig, Figure) and out.stat().st_size > 1000
    ax = fig.axes[0]
    assert ax.get_xlabel() == "FCT (ms)" and ax.get_ylabel() == "CDF" and ax.get_title() == "FCT CDF"
    assert len(ax.lines) == 2
    y = ax.lines[0].get_ydata()
    assert y[-1] == pytest.approx(1.0) and len(y) == 13
    assert len(plots.fct_cdf(run, by="tag").axes[0].lines) == 3


def test_slowdown_by_size(flows_dir):
    fig = plots.slowdown_by_size({"a": load_run(flows_dir)})
    ax = fig.axes[0]
    assert len(ax.lines) == 2 and ax.get_xlabel() == "flow size"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["<100KB", "100KB-10MB", ">=10MB"]
    assert list(ax.lines[1].get_ydata()) == pytest.approx([9.91, 2.98, 1.25])   # p99 per bucket


def test_cc_timeseries(flows_dir):
    run = load_run(flows_dir)
    fig = plots.cc_timeseries(run, metric="rate_bps")
    ax = fig.axes[0]
    assert len(ax.lines) == 3 and ax.get_ylabel() == "rate (Gbit/s)" and ax.get_xlabel() == "time (ns)"
    assert max(ax.lines[0].get_ydata()) == pytest.approx(40)
    assert len(plots.cc_timeseries(run, metric="cwnd_bytes").axes[0].lines) == 0   # no cwnd in DCQCN


def test_queue_timeseries(flows_dir):
    ax = plots.queue_timeseries(load_run(flows_dir)).axes[0]
    assert [l.get_label() for l in ax.lines] == ["sw0->h9"]          # the empty port is left out by default
    assert ax.get_ylabel() == "queue (KB)"


def test_heatmaps(flows_dir, train_dir):
    fig = plots.utilization_heatmap(throughput(load_run(flows_dir).fct, by="src") / 1e9)
    assert fig.axes[0].get_ylabel() == "link" and len(fig.axes[0].images) == 1
    m = traffic_matrix(load_run(train_dir), iteration=0)
    fig = plots.traffic_matrix_heatmap(m)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "destination" and ax.get_ylabel() == "source"
    assert ax.images[0].get_array().shape == (2, 2)     # traffic_matrix.csv has g0<->g1 only


def test_gantt(train_dir):
    fig = plots.gantt(load_run(train_dir), iteration=1)
    ax = fig.axes[0]
    assert ax.get_title() == "Iteration 1 timeline"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rank 0", "rank 1"]
    assert ax.get_xlabel() == "time since iteration start (ns)"
    # one bar collection per (rank, kind): 2 ranks x {compute, tp, dp}
    assert len(ax.collections) == 6
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == ["compute", "dp", "tp"]


def test_breakdown_pfc_messages_compare(flows_dir, train_dir, tmp_path):
    tr, fl = load_run(train_dir), load_run(flows_dir)
    ax = plots.breakdown_bar([tr]).axes[0]
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {"compute", "tp", "dp", "other"}
    ax = plots.pfc_pause_bar(fl).axes[0]
    assert len(ax.patches) == 2 and ax.get_xlabel().startswith("pause time")
    ax = plots.message_size_cdf(message_sizes(tr)).axes[0]
    assert len(ax.lines) == 2 and ax.get_xlabel() == "message size (bytes)"
    fig = plots.compare_runs([fl, tr], path=str(tmp_path / "sub" / "cmp.png"))
    assert len(fig.axes) == 2 and os.path.exists(tmp_path / "sub" / "cmp.png")
    assert len(fig.axes[0].patches) == 2 * 3      # 2 runs x 3 percentiles


def test_plots_on_empty_run(tmp_path):
    run = load_run(str(tmp_path))
    for f in (plots.fct_cdf(run), plots.gantt(run), plots.queue_timeseries(run), plots.cc_timeseries(run)):
        assert isinstance(f, Figure)
