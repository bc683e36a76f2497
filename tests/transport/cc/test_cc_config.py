"""--cc-param resolution, parameter files, the registry and ECN overrides."""
import json

import pytest

from netsim.errors import InputError
from netsim.transport.cc import REGISTRY, ecn_overrides, resolve_cc_params


def test_registry_has_all():
    assert {"none", "cubic", "dcqcn", "dctcp"} <= set(REGISTRY)
    for cls in REGISTRY.values():
        assert cls.transport in ("tcp", "roce")
        for p in cls.PARAMS:
            assert p.source and p.doc


def test_bare_and_qualified_keys():
    out = resolve_cc_params("cubic", ["beta=0.8", "dcqcn.preset=hpcc", "DCTCP.g=1/8"])
    assert out["cubic"]["beta"] == 0.8
    assert out["dcqcn"]["preset"] == "hpcc"
    assert out["dctcp"]["g"] == 0.125
    assert out["none"]["window_bytes"] == 0


def test_unknown_key_and_algorithm():
    with pytest.raises(InputError, match="one of: c, beta"):
        resolve_cc_params("cubic", ["gamma=1"])
    with pytest.raises(InputError, match="cubic, dcqcn, dctcp, hpcc, none, swift, timely"):
        resolve_cc_params("reno")
    with pytest.raises(InputError, match="cubic, dcqcn, dctcp, hpcc, none, swift, timely"):
        resolve_cc_params("cubic", ["bbr.x=1"])
    with pytest.raises(InputError, match="KEY=VALUE"):
        resolve_cc_params("cubic", ["beta"])


def test_params_file_yaml_and_json(tmp_path):
    y = tmp_path / "cc.yaml"
    y.write_text("dcqcn:\n  preset: hpcc\n  g: 1/16\nbeta: 0.6\n")
    out = resolve_cc_params("cubic", ["dcqcn.g=1/32"], file=str(y))
    assert out["dcqcn"]["preset"] == "hpcc" and out["dcqcn"]["g"] == 1 / 32  # CLI wins
    assert out["cubic"]["beta"] == 0.6
    j = tmp_path / "cc.json"
    j.write_text(json.dumps({"dctcp": {"k_bytes": "30KB"}}))
    assert resolve_cc_params("dctcp", file=str(j))["dctcp"]["k_bytes"] == 30_000
    bad = tmp_path / "bad.yaml"
    bad.write_text("dcqcn:\n  nope: 1\n")
    with pytest.raises(InputError, match="bad.yaml"):
        resolve_cc_params("dcqcn", file=str(bad))


def test_ecn_overrides():
    p = resolve_cc_params("dcqcn", ["preset=hpcc"])["dcqcn"]
    assert ecn_overrides("dcqcn", p, 100e9) == {
        "ecn_kmin_bytes": 400_000, "ecn_kmax_bytes": 1_600_000, "ecn_pmax": 0.2, "ecn_mark_at": "dequeue"}
    assert ecn_overrides("dcqcn", {"preset": "hpcc"}, 25e9)["ecn_kmin_bytes"] == 100_000
    assert ecn_overrides("dcqcn", {}, 25e9)["ecn_kmin_bytes"] == 100_000      # default preset: hpcc
    assert ecn_overrides("dcqcn", {"preset": "paper"}, 25e9)["ecn_kmin_bytes"] == 5_000
    assert ecn_overrides("none", {}, 100e9) == {}
