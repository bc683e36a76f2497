"""report.html is readable: every plot carries data, labels are names, tables show units, no empty sections."""
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg

from netsim.analysis import plots
from netsim.analysis.io import load_run
from netsim.analysis.report import TRAINING_SECTIONS, fmt_ns, render_report, write_report


def test_sparse_cc_histories_still_draw_lines():
    # 200 flows sampled once each (a training run's typical cc.csv): one-line-per-flow drew nothing visible
    cc = pd.DataFrame({"time_ns": np.arange(200) * 1000, "flow_id": np.arange(200), "cc": "dcqcn",
                       "cwnd_bytes": np.nan, "rate_bps": np.where(np.arange(200) % 2, 400e9, 3.6e12),
                       "alpha": 1.0, "srtt_ns": np.nan})
    fig = plots.cc_timeseries(cc, "rate_bps")
    ax = fig.axes[0]
    medians = [ln for ln in ax.lines if ln.get_label().startswith("median")]
    assert len(medians) == 2  # the 400 Gb/s and the 3.6 Tb/s flows, never mixed in one line
    levels = sorted(float(np.nanmedian(ln.get_ydata())) for ln in medians)
    assert levels == [400.0, 3600.0]


def test_dense_histories_keep_one_line_per_flow():
    cc = pd.DataFrame({"time_ns": np.tile(np.arange(10) * 100, 3), "flow_id": np.repeat([1, 2, 3], 10),
                       "cc": "cubic", "cwnd_bytes": np.arange(30) * 1500.0, "rate_bps": np.nan,
                       "alpha": np.nan, "srtt_ns": np.nan})
    ax = plots.cc_timeseries(cc, "cwnd_bytes").axes[0]
    assert [ln.get_label() for ln in ax.lines] == ["flow 1", "flow 2", "flow 3"]


def test_heatmap_rows_are_link_names_even_with_many_links():
    links = [f"leaf{i // 8}->s{i}.nic0" for i in range(46)]
    util = pd.DataFrame(np.random.default_rng(0).random((20, 46)), columns=links,
                        index=pd.Index(np.arange(20) * 1000, name="time_ns"))
    ax = plots.utilization_heatmap(util).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 32 and all(lab in links for lab in labels)
    assert "busiest 32 of 46" in ax.get_title()


def test_breakdown_legend_does_not_cover_the_bars(train_dir):
    fig = plots.breakdown_bar([load_run(train_dir)])
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    r = fig.canvas.get_renderer()
    legend, axes_box = ax.get_legend().get_window_extent(r), ax.get_window_extent(r)
    assert legend.y1 <= axes_box.y0  # entirely below the axes


def test_fct_tables_show_times_with_units_not_raw_ns(train_dir):
    html = open(write_report([train_dir])).read()
    fct = html[html.index('id="fct"'):html.index('id="fct-groups"')]
    assert "e+0" not in fct and ("µs" in fct or "ms" in fct)
    assert fmt_ns(2_612_000) == "2.612 ms" and fmt_ns(512) == "512 ns" and fmt_ns(1.5e9) == "1.5 s"


def test_flow_list_report_leaves_out_training_sections(flows_dir):
    html = render_report([load_run(flows_dir)])
    for key in TRAINING_SECTIONS:
        assert f'id="{key}"' not in html
    assert "do not apply and are left out" in html
    assert 'id="traffic"' in html and "Traffic matrix" in html.split('id="traffic"')[1][:400]


def test_report_bytes_do_not_depend_on_time_or_folder(flows_dir, tmp_path):
    a = render_report([load_run(flows_dir)])
    b = render_report([load_run(flows_dir)])
    assert a == b and str(tmp_path) not in a


def test_page_fits_a_1400px_window():
    from netsim.analysis.report import _CSS
    assert "max-width:1360px" in _CSS and ".tw{overflow-x:auto" in _CSS  # wide tables scroll inside the page
