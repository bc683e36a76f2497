"""``netsim traffic --topology``: a host's line rate is its network link's, never a GPU's PCIe link.

Regression (issue #14, trial): GPUs behind a shared NIC were offered 0.5 x their 256 Gb/s PCIe link.
"""
from netsim.cli import main

TOPO = """nodes:
  - {name: g0, kind: gpu}
  - {name: g1, kind: gpu}
  - {name: n0, kind: nic, nic_kind: roce}
  - {name: sw, kind: switch}
links:
  - {src: g0, dst: n0, kind: pcie, rate_bps: 256Gbps, delay_ns: 100}
  - {src: g1, dst: n0, kind: pcie, rate_bps: 256Gbps, delay_ns: 100}
  - {src: n0, dst: sw, kind: ethernet, rate_bps: 100Gbps, delay_ns: 500}
"""


def test_gpu_behind_a_nic_needs_rate(tmp_path, capsys):
    p = tmp_path / "t.yaml"
    p.write_text(TOPO)
    out = str(tmp_path / "f.csv")
    assert main(["traffic", "websearch", "--load", "0.3", "--duration", "1ms", "--topology", str(p),
                 "--out", out]) == 2
    err = capsys.readouterr().err
    assert "--rate" in err and "pcie" in err
    assert main(["traffic", "websearch", "--load", "0.3", "--duration", "1ms", "--topology", str(p),
                 "--rate", "50Gbps", "--out", out, "--seed", "1"]) == 0


def test_out_that_is_a_directory_or_under_a_missing_one_names_the_flag(tmp_path, capsys):
    """``--out DIR`` used to write ``DIR.partial`` beside the folder and fail with an OSError naming it."""
    p = tmp_path / "t.yaml"
    p.write_text(TOPO)
    for out, why in ((tmp_path, "is a directory"), (tmp_path / "no" / "f.csv", "does not exist")):
        assert main(["traffic", "websearch", "--load", "0.3", "--duration", "1ms", "--topology", str(p),
                     "--rate", "50Gbps", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--out" in err[0] and why in err[0], err
    assert not any(f.name.endswith(".partial") for f in tmp_path.parent.iterdir())
