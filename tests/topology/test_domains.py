"""Scale-up domains derived from links (no ``server`` attribute needed), and ``topo show`` listing them."""
import json

import pytest

from netsim.cli import main
from netsim.errors import InputError
from netsim.topology import gpu_cluster, load_topology
from netsim.topology.domains import domain_keys, hierarchical_groups, scaleup_domains
from tests.topology.handwritten import nvl_rack_yaml, two_servers_yaml


def _load(tmp_path, text, name="t.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return load_topology(str(p)), str(p)


@pytest.mark.parametrize("nic_per_gpu", [True, False])
def test_handwritten_servers_are_found_from_nvswitch_links(tmp_path, nic_per_gpu):
    g, _ = _load(tmp_path, two_servers_yaml(nic_per_gpu=nic_per_gpu))
    doms = scaleup_domains(g)
    assert [d.gpus for d in doms] == [tuple(f"n0.g{i}" for i in range(4)), tuple(f"n1.g{i}" for i in range(4))]
    assert [d.name for d in doms] == ["domain0", "domain1"] and all(d.servers == () for d in doms)


def test_server_attribute_names_the_domain(tmp_path):
    g, _ = _load(tmp_path, two_servers_yaml(with_server_attr=True))
    assert [(d.name, len(d.gpus)) for d in scaleup_domains(g)] == [("srv0", 4), ("srv1", 4)]


def test_nvl_rack_of_two_joined_nvswitches_is_one_domain(tmp_path):
    g, _ = _load(tmp_path, nvl_rack_yaml(trays=4, gpus_per_tray=4, nvswitches=2))
    doms = scaleup_domains(g)
    assert len(doms) == 1 and len(doms[0].gpus) == 16
    keys = domain_keys(g)
    assert len({keys[x] for x in doms[0].gpus}) == 1


def test_builder_domains_match_servers_and_pcie_only_servers():
    g = gpu_cluster(servers=3, gpus_per_server=4, spines=0)
    assert [(d.name, len(d.gpus)) for d in scaleup_domains(g)] == [("s0", 4), ("s1", 4), ("s2", 4)]
    # PCIe-only with the CPU root complex: still one domain per server
    g = gpu_cluster(servers=2, gpus_per_server=4, nvswitch=False, spines=0)
    assert [len(d.gpus) for d in scaleup_domains(g)] == [4, 4]
    # PCIe-only without a root complex: GPUs on different PCIe switches only meet through the NICs
    g = gpu_cluster(servers=2, gpus_per_server=4, gpus_per_nic=2, nvswitch=False, root_complex=False, spines=0)
    assert [d.gpus for d in scaleup_domains(g)][:2] == [("s0.gpu0", "s0.gpu1"), ("s0.gpu2", "s0.gpu3")]


def test_hierarchical_groups_refuses_what_it_cannot_find(tmp_path):
    g, _ = _load(tmp_path, two_servers_yaml())
    keys = domain_keys(g)
    assert hierarchical_groups(["n0.g0", "n1.g0", "n0.g1", "n1.g1"], keys) == [["n0.g0", "n0.g1"],
                                                                              ["n1.g0", "n1.g1"]]
    with pytest.raises(InputError, match="one rank per scale-up domain"):
        hierarchical_groups(["n0.g0", "n1.g0"], keys, where="collectives.dp.algorithm")
    with pytest.raises(InputError, match="same number of ranks.*3/1"):
        hierarchical_groups(["n0.g0", "n0.g1", "n0.g2", "n1.g0"], keys)
    assert hierarchical_groups(["n0.g0", "n0.g1"], keys) == [["n0.g0", "n0.g1"]]   # one domain: a ring inside


def test_topo_show_lists_domains(tmp_path, capsys):
    _, path = _load(tmp_path, two_servers_yaml())
    assert main(["topo", "show", path, "--no-bisection"]) == 0
    out = capsys.readouterr().out
    assert "scale-up domains (GPUs joined by NVLink/NVSwitch/PCIe, no NIC): 2 (2 x 4 GPUs): domain0, domain1" in out
    _, path = _load(tmp_path, nvl_rack_yaml(trays=18, gpus_per_tray=4, nvswitches=9), "rack.yaml")
    assert main(["topo", "show", path, "--no-bisection", "--json"]) == 0
    dom = json.loads(capsys.readouterr().out)["scaleup_domains"]
    assert dom == {"count": 1, "names": ["domain0"], "sizes": {"72": 1}, "server_attr_differs": False}


def test_rank_order_is_domain_major_whatever_the_names(tmp_path):
    """GPUs named so that natural order interleaves servers still get consecutive ranks per domain."""
    from netsim.topology import gpus
    text = two_servers_yaml()
    names = {f"n{s}.g{i}": f"gpu{2 * i + s}" for s in range(2) for i in range(4)}   # server 0: gpu0, 2, 4, 6
    for old, new in sorted(names.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(f"{old},", f"{new},").replace(f"{old}}}", f"{new}}}")
    g, _ = _load(tmp_path, text)
    assert gpus(g) == ["gpu0", "gpu2", "gpu4", "gpu6", "gpu1", "gpu3", "gpu5", "gpu7"]
    assert [d.gpus for d in scaleup_domains(g)] == [("gpu0", "gpu2", "gpu4", "gpu6"), ("gpu1", "gpu3", "gpu5", "gpu7")]


def test_topo_show_says_when_server_attributes_disagree_with_domains(tmp_path, capsys):
    text = nvl_rack_yaml(trays=2, gpus_per_tray=4, nvswitches=2)
    for t in range(2):
        for i in range(4):
            text = text.replace(f"{{name: t{t}.g{i}, kind: gpu}}", f"{{name: t{t}.g{i}, kind: gpu, server: tray{t}}}")
    g, path = _load(tmp_path, text)
    assert [(d.name, d.servers) for d in scaleup_domains(g)] == [("domain0", ("tray0", "tray1"))]
    assert main(["topo", "show", path, "--no-bisection"]) == 0
    assert "server attributes group GPUs otherwise" in capsys.readouterr().out
    _, path = _load(tmp_path, two_servers_yaml(with_server_attr=True), "ok.yaml")
    assert main(["topo", "show", path, "--no-bisection"]) == 0
    assert "otherwise" not in capsys.readouterr().out


def test_nvswitch_written_as_a_plain_switch_still_joins_over_nvlink(tmp_path):
    text = two_servers_yaml().replace("kind: nvswitch", "kind: switch")
    g, _ = _load(tmp_path, text)
    assert [len(d.gpus) for d in scaleup_domains(g)] == [4, 4]
    # PCIe through a network switch or a NIC never joins a domain
    text = two_servers_yaml(nic_per_gpu=False).replace("kind: nvlink", "kind: ethernet")
    g, _ = _load(tmp_path, text.replace("kind: pcie_switch", "kind: switch"), "p.yaml")
    assert [len(d.gpus) for d in scaleup_domains(g)] == [1] * 8
