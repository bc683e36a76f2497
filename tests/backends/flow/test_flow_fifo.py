"""Fluid FIFO queues with per-ingress PFC (netsim/backends/flow/fifo.py) against closed forms."""
import pytest

from netsim.backends.flow.fifo import FifoNet, FifoQueue

RATE = 12.5e-3          # 100 Gb/s in bytes/ps
US = 1_000_000          # ps


class F:
    def __init__(self, fid, links):
        self.fid, self.links = fid, links


def test_queue_is_first_in_first_out_and_conserves_bytes():
    q = FifoQueue()
    q.arrivals = {1: 300.0}
    q.push()
    q.arrivals = {2: 100.0, 1: 100.0}
    q.push()
    out = q.serve(350.0)                 # all of segment 1, then a quarter of segment 2
    assert out == pytest.approx({1: 325.0, 2: 25.0})
    assert q.q == pytest.approx(150.0)
    out = q.serve(1e9)
    assert out == pytest.approx({1: 75.0, 2: 75.0})
    assert q.q == 0.0 and not q.segs


def _net(gap=28_000.0, kmax=200_000.0):
    # links: 0 = a->s (sender 1), 1 = b->s (sender 2), 2 = s->d (switch egress, the bottleneck)
    cap = [RATE, RATE, RATE]
    tail_switch = [False, False, True]
    return FifoNet(cap, tail_switch, [gap] * 3, lambda l: kmax)


def test_late_joiner_waits_a_queueing_delay_before_its_first_byte_leaves():
    net = _net(kmax=1e12)                # no PFC in this test
    a, b = F(1, (0, 2)), F(2, (1, 2))
    net.attach(a)
    dt = 2 * US
    # two senders at line rate for 20 us: the egress queue grows at 100 Gb/s
    net.attach(b)
    for _ in range(10):
        net.step([a, b], {1: RATE * dt, 2: RATE * dt}, dt)
    backlog = net.queues[2].q
    assert backlog == pytest.approx(10 * RATE * dt)
    c = F(3, (1, 2))
    net.attach(c)
    first_out = None
    t = 0
    while first_out is None and t < 200:
        _, dep, _ = net.step([a, b, c], {1: 0.0, 2: 0.0, 3: RATE * dt / 10}, dt)
        t += 1
        if dep.get(2, {}).get(3):
            first_out = t * dt
    # its first bytes leave once the backlog ahead of them has drained: backlog / C
    assert first_out == pytest.approx(backlog / RATE + dt, abs=dt)


def test_pfc_pauses_above_xoff_and_resumes_at_xon():
    kmax, gap = 200_000.0, 28_000.0
    net = _net(gap=gap, kmax=kmax)
    a, b = F(1, (0, 2)), F(2, (1, 2))
    net.attach(a)
    net.attach(b)
    dt = US // 10
    paused_at = resumed_at = None
    for k in range(3000):
        want = RATE * dt
        net.step([a, b], {1: want, 2: want}, dt)
        c = net.cnt.get(0, 0.0)
        if paused_at is None and 0 in net.paused:
            paused_at = k
            assert c > kmax + gap - 2 * want          # crossed XOFF in this step
        if paused_at is not None and resumed_at is None and 0 not in net.paused:
            resumed_at = k
            assert c <= kmax                           # back at XON
            break
    assert paused_at is not None and resumed_at is not None
    # the queue never holds more than the two ingresses' XOFF plus one step of arrivals each
    assert net.queues[2].q <= 2 * (kmax + gap + RATE * dt) + 1


def test_sender_nic_is_shared_by_its_flows():
    net = _net(kmax=1e12)
    f1, f2 = F(1, (0, 2)), F(2, (0, 2))
    net.attach(f1)
    net.attach(f2)
    dt = US
    sent, _, _ = net.step([f1, f2], {1: RATE * dt, 2: RATE * dt}, dt)
    assert sent[1] + sent[2] == pytest.approx(RATE * dt)


def test_detach_removes_the_flows_bytes_and_counters():
    net = _net(kmax=1e12)
    a, b = F(1, (0, 2)), F(2, (1, 2))
    net.attach(a)
    net.attach(b)
    dt = 4 * US
    net.step([a, b], {1: RATE * dt, 2: RATE * dt}, dt)
    q_before = net.queues[2].q
    held = net.cnt[1]
    net.detach(b)
    assert net.queues[2].q == pytest.approx(q_before - held)
    assert net.cnt.get(1, 0.0) == pytest.approx(0.0, abs=1e-6)


def test_dcqcn_flows_survive_a_link_failure_mid_incast():
    """fail_link moves running DCQCN flows (and their FIFO state) to the surviving spine."""
    import simpy

    from netsim.backends.base import TraceSinks, create_backend
    from netsim.records import ListSink
    from netsim.topology import load_topology
    g = load_topology("leaf_spine:leaves=3,spines=2,hosts_per_leaf=4")
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend("flow", g, env=env, cc="dcqcn", sinks=TraceSinks(fct=sink))
    for i in range(8):
        b.send(f"h{4 + i}", "h0", 1_000_000)

    def fail(env):
        yield env.timeout(50 * US)
        b.fail_link("leaf1", "spine0")
        b.fail_link("leaf2", "spine1")

    env.process(fail(env))
    env.run()
    st = b.stats()
    assert st["completed"] == 8 and st["bytes_delivered"] == 8_000_000
    assert st["dcqcn_cnps"] > 0
    assert not b.dcqcn_model.net.queues or all(q.q < 1.0 for q in b.dcqcn_model.net.queues.values())
