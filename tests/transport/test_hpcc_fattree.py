"""HPCC's fat tree (``simulation/mix/fat.txt`` of alibaba-edu/High-Precision-Congestion-Control).

Oracle: the file HPCC ships (15 486 bytes at commit 9950bbb; its SHA-256 below was taken from that
text), and the layout its paper describes (§5.1: 320 servers, 16 per ToR at 100 Gb/s, 400 Gb/s
fabric links, 5 pods of 4 ToRs and 4 aggregation switches, 16 cores).
"""
import hashlib
from collections import Counter

from netsim.topology.hpcc import FatTreeLayout, hpcc_fat_tree, hpcc_fat_tree_text

#: SHA-256 and length of HPCC's simulation/mix/fat.txt as shipped
FAT_TXT_SHA256 = "e8e2d965071b33fb29e3b58e9368dd26434aebdc1f90fc40883008a2c76b960e"
FAT_TXT_CHARS = 15_486


def test_text_is_hpccs_fat_txt_byte_for_byte():
    text = hpcc_fat_tree_text()
    assert len(text) == FAT_TXT_CHARS
    assert hashlib.sha256(text.encode("ascii")).hexdigest() == FAT_TXT_SHA256
    lines = text.splitlines()
    assert lines[0] == "376 56 480" and lines[1].split() == [str(i) for i in range(320, 376)]
    assert lines[2] == "0 320 100Gbps 1000ns 0.000000" and lines[-2] == "359 375 400Gbps 1000ns 0.000000"


def test_graph_layout(tmp_path):
    g = hpcc_fat_tree(path=str(tmp_path / "fat.txt"))
    kinds = Counter(d["kind"] for _, d in g.nodes(data=True))
    assert kinds == {"host": 320, "switch": 56} and g.number_of_edges() == 480
    deg = dict(g.degree())
    assert all(deg[str(h)] == 1 for h in range(320))
    assert all(deg[str(t)] == 16 + 4 for t in range(320, 340))      # 16 servers + 4 aggregation switches
    assert all(deg[str(a)] == 4 + 4 for a in range(340, 360))      # 4 ToRs of its pod + 4 cores
    assert all(deg[str(c)] == 5 for c in range(360, 376))          # one aggregation switch per pod
    # aggregation switch j of every pod reaches core group j only
    assert sorted(int(n) for n in g.neighbors("344") if int(n) >= 360) == [360, 361, 362, 363]
    assert sorted(int(n) for n in g.neighbors("345") if int(n) >= 360) == [364, 365, 366, 367]


def test_smaller_layout_counts():
    text = hpcc_fat_tree_text(FatTreeLayout(pods=2, tors_per_pod=2, hosts_per_tor=2, aggs_per_pod=2,
                                            cores_per_agg=1))
    n_nodes, n_sw, n_links = map(int, text.splitlines()[0].split())
    # 8 hosts, 4 ToRs, 4 aggregation, 2 cores; links 8 + 4x2 + 4x1
    assert (n_nodes, n_sw, n_links) == (18, 10, 20)
