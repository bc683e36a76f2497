"""A link's random loss (``error_rate``) is honoured by the packet backend and refused by the others.

Regression (issue #14, trial): flow and analytic ignored it silently (85.6 µs
and 0 retransmissions where the packet backend took 1,138.5 µs with 1,000).
"""
import pytest

from netsim.cli import main

TOPO = "3 1 2\n2\n0 2 100Gbps 1000ns 0.01\n1 2 100Gbps 1000ns 0\n"
FLOWS = "src,dst,size_bytes,start_ns\n0,1,100KB,0\n"


@pytest.mark.parametrize("backend", ["flow", "analytic"])
def test_error_rate_refused_off_packet(tmp_path, capsys, backend):
    (tmp_path / "topology.txt").write_text(TOPO)
    (tmp_path / "f.csv").write_text(FLOWS)
    rc = main(["flows", str(tmp_path / "topology.txt"), str(tmp_path / "f.csv"), "--out", str(tmp_path / "o"),
               "--backend", backend, "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "link 0 -- 2, field error_rate" in err[0] and "--backend packet" in err[0]


def test_error_rate_runs_on_packet(tmp_path, capsys):
    (tmp_path / "topology.txt").write_text(TOPO)
    (tmp_path / "f.csv").write_text(FLOWS)
    assert main(["flows", str(tmp_path / "topology.txt"), str(tmp_path / "f.csv"), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
