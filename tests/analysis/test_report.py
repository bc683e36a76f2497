"""report.html: opens (parses), is self-contained and has every section."""
import subprocess
import sys
from html.parser import HTMLParser


from netsim.analysis.report import SECTIONS, write_report
from netsim.cli import main


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.imgs, self.external = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.ids.append(a.get("id"))
        if tag == "img":
            self.imgs.append(a["src"])
        if tag in ("script", "link") and (a.get("src") or a.get("href")):
            self.external.append(a)


def _parse(path):
    p = _Collect()
    with open(path, encoding="utf-8") as fh:
        p.feed(fh.read())
    p.close()
    return p


def test_single_run_report(train_dir):
    out = write_report([train_dir])
    assert out.endswith("train_run/report.html")
    p = _parse(out)
    assert p.ids == [k for k, _ in SECTIONS]
    assert p.imgs and all(s.startswith("data:image/png;base64,") for s in p.imgs)
    assert not p.external
    text = open(out).read()
    assert "Iteration 0 timeline" in text and "exposed_comm_ns" in text


def test_comparison_report_via_cli(flows_dir, train_dir, tmp_path, capsys):
    out = tmp_path / "cmp.html"
    assert main(["report", flows_dir, train_dir, "--out", str(out), "--trace", "--parquet"]) == 0
    p = _parse(out)
    assert p.ids == [k for k, _ in SECTIONS]
    assert len(p.imgs) >= 10
    html = out.read_text()
    assert "flows_run" in html and "train_run" in html and "Run comparison" in html
    assert (tmp_path / "flows_run" / "trace.json").exists()


def test_report_bad_dir_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "netsim", "report", str(tmp_path / "none")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "not found" in r.stderr and "Traceback" not in r.stderr
