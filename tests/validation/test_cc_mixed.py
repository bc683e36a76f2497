"""Algorithms sharing a network: per-flow ``cc`` (Cubic on lossy priority 0, DCQCN on lossless 3)."""
import os

from netsim.bench.cc import dumbbell_graph
from netsim.flowfile import load_flows
from netsim.simulate import run_flows
from netsim.topology import validate
from netsim.transport.cc import ecn_overrides


def test_cubic_and_dcqcn_share_a_switch(tmp_path):
    g = validate(dumbbell_graph(2, host_rate_bps=25e9, host_delay_ns=1000, bott_rate_bps=10e9,
                                bott_delay_ns=1000))
    path = os.path.join(tmp_path, "flows.csv")
    with open(path, "w") as fh:
        fh.write("src,dst,size_bytes,start_ns,tag,cc\n")
        fh.write("s0,r0,5000000,0,tcp,cubic\n")
        fh.write("s1,r0,5000000,0,rdma,dcqcn\n")
    flows = load_flows(path, g)
    params = {"buffer_bytes": 1_000_000, **ecn_overrides("dcqcn", {}, 10e9)}
    s = run_flows(g, flows, cc="cubic", params=params, cc_params={"cubic": {"min_rto_ns": "1ms"}},
                  out_dir=os.path.join(tmp_path, "out"))
    recs = sorted(s_ for s_ in open(os.path.join(tmp_path, "out", "fct.csv")).read().splitlines()[1:])
    assert s["completed"] == 2 and len(recs) == 2
    assert {"cubic", "dcqcn"} <= {r.split(",")[10] for r in recs}
    # the lossless class never drops; whatever was dropped was Cubic's (priority 0)
    assert set(s["drops_by_priority"]) <= {"0"}
    # 10 MB through 10 Gbps takes at least 8 ms; both finish well within 4x that
    assert s["sim_time_ns"] < 4 * 10_000_000 * 8 / 10e9 * 1e9
