"""`netsim topo validate|show`: OK line with counts, summary, one-line errors with exit 2."""
import json
import os
import subprocess
import sys

import pytest

from netsim.cli import main
from tests.conftest import TOPOLOGIES


def test_validate_ok(capsys):
    assert main(["topo", "validate", os.path.join(TOPOLOGIES, "leaf_spine_64gpu.yaml")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK ") and "gpu=64" in out and "nvlink=64" in out


def test_show_builder_expression(capsys):
    assert main(["topo", "show", "leaf_spine:leaves=4,spines=2,hosts_per_leaf=4"]) == 0
    out = capsys.readouterr().out
    # non-blocking by default: 2 leaves x 2 uplinks x 200 Gbps = the 8 hosts' 800 Gbps (was 400 at the host rate)
    assert "host=16" in out and "bisection bandwidth: 800Gbps" in out
    assert "oversubscription leaf (downlink:uplink, 4 switches): 1:1 (non-blocking)" in out


def test_show_prints_oversubscription_per_tier(capsys):
    assert main(["topo", "show", "--no-bisection", "leaf_spine:hosts_per_leaf=8,oversubscription=4"]) == 0
    assert "oversubscription leaf (downlink:uplink, 4 switches): 4:1\n" in capsys.readouterr().out
    assert main(["topo", "show", "--no-bisection", "fat_tree:k=4"]) == 0
    out = capsys.readouterr().out
    assert "oversubscription level 1 (downlink:uplink, 8 switches): 1:1" in out     # edge switches
    assert "oversubscription level 2 (downlink:uplink, 8 switches): 1:1" in out     # aggregation switches


def test_show_json(capsys):
    assert main(["topo", "show", "--json", "fat_tree:k=4"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["node_kinds"] == {"host": 16, "switch": 20} and s["bisection_bps"] == pytest.approx(8 * 100e9)


@pytest.mark.parametrize("spec", ["missing.yaml", "leaf_spine:spinez=2", "leaf_spine:host_rate_bps=10Gbsp"])
def test_errors_one_line_exit_2(spec, capsys):
    assert main(["topo", "validate", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_subprocess_exit_status(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("nodes: [{name: a, kind: host}, {name: b, kind: switch}]\n"
                 "links: [{src: a, dst: b, kind: ethernet, delay_ns: 1us}]\n")
    r = subprocess.run([sys.executable, "-m", "netsim", "topo", "validate", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and "missing field rate_bps" in r.stderr and r.stderr.count("\n") == 1
