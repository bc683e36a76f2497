"""The fluid DCQCN model of the flow backend (dcqcnfluid.py) against closed forms."""
import pytest
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.records import ListSink
from netsim.topology import load_topology


def run(n, size=2_000_000, stagger_ns=0, **params):
    g = load_topology(f"dumbbell:n_left={n},n_right={n}")
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, cc="dcqcn", params=params, sinks=TraceSinks(fct=sink))

    def start(env, i):
        yield env.timeout(i * stagger_ns * 1000)
        yield b.send(f"left{i}", f"right{i}", size)

    for i in range(n):
        env.process(start(env, i))
    env.run()
    return b, sorted(sink.rows, key=lambda r: r.flow_id)


def test_lone_flow_is_ideal_and_costs_no_ticks():
    """DCQCN starts at line rate: alone, nothing is marked and the flow takes its ideal time."""
    b, rows = run(1, 10_000_000)
    assert abs(rows[0].fct_ns - rows[0].ideal_fct_ns) <= 1
    st = b.stats()
    assert st["dcqcn_cnps"] == 0 and st["dcqcn_ticks"] <= 3   # start, one tick at rest, end


def test_cut_phase_halves_rates_while_backlog_is_above_kmax():
    """N flows at line rate into one link: with alpha = 1 every CNP halves R_C (R_C(1 - a/2)),
    one CNP per 50 us per flow while the backlog is above Kmax; no flow may exceed line rate
    and the link is never loaded above capacity."""
    b, rows = run(4, 4_000_000)
    st = b.stats()
    # 4 flows x 4 cuts each in the packet backend too (docs/flow-backend.md); at least 2 per flow
    assert st["dcqcn_cnps"] >= 8
    fcts = [r.fct_ns for r in rows]
    assert max(fcts) > 1.3 * min(r.ideal_fct_ns for r in rows) * 4  # worse than perfect sharing
    assert len(set(fcts)) == 1 or max(fcts) / min(fcts) < 1.01      # same start, same law: fair


def test_rp_state_machine_is_the_packet_one():
    """The flow model drives netsim.transport.cc.dcqcn.DCQCN itself: after the first cut the rate
    is exactly half the line rate (alpha = initial_alpha = 1; the paper preset cuts at the CNP)."""
    from netsim.backends.flow.dcqcnfluid import DcqcnFluid
    dq = DcqcnFluid({"preset": "paper"}, [12.5e-3] * 2, [True, True], [0.0, 0.0], 10_000)

    class F:
        pass
    f = F()
    f.fid, f.links, f.cap, f.rate, f.mtu, f.ceil, f.bott, f.rem = 0, (0,), 12.5e-3, 12.5e-3, 1500, 12.5e-3, 12.5e-3, 1e6
    dq.add(f, 0, 12.5e-3, 1500, 10e6)
    f.rp.on_cnp(0)
    assert f.rp.rate_bps == pytest.approx(50e9)


def test_deterministic():
    a = [r.row() for r in run(4, 1_000_000, stagger_ns=7_000)[1]]
    b = [r.row() for r in run(4, 1_000_000, stagger_ns=7_000)[1]]
    assert a == b


def test_nvlink_only_dcqcn_flows_stay_out_of_the_model():
    """Two GPUs of one server: no switch can mark the path, so the flow is ideal and costs no tick."""
    from netsim.topology import gpus
    g = load_topology("gpu_server:gpus=8")
    gs = gpus(g)
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, cc="dcqcn", sinks=TraceSinks(fct=sink))
    b.send(gs[0], gs[1], 50_000_000)
    env.run()
    st = b.stats()
    assert st["dcqcn_ticks"] == 0 and st["dcqcn_cnps"] == 0
    assert abs(sink.rows[0].fct_ns - sink.rows[0].ideal_fct_ns) <= 1


def test_dynamic_model_without_a_rate_controller_is_rejected():
    """``flow_dynamic=true`` for an algorithm no rate controller implements is an error up front
    (it used to run the static model silently); DCQCN's is registered through the one hook."""
    import simpy
    from netsim.backends.base import create_backend
    from netsim.backends.flow.controllers import RATE_CONTROLLERS
    from netsim.errors import InputError
    from netsim.topology import load_topology
    g = load_topology("dumbbell:n_left=2,n_right=2")
    with pytest.raises(InputError, match=r"cubic\.flow_dynamic=true.*flow_dynamic=true only for dcqcn"):
        create_backend("flow", g, env=simpy.Environment(), cc="cubic",
                       cc_params={"cubic": {"flow_dynamic": True}})
    assert set(RATE_CONTROLLERS) == {"dcqcn"}
    for hook in ("admit", "release", "catch_up", "detach", "attach"):
        assert callable(getattr(RATE_CONTROLLERS["dcqcn"], hook))
