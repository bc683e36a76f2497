"""The FIFO wait a fluid DCQCN flow's last byte still owes at its fluid completion (queueing.py)."""
import pytest
import simpy

from netsim.backends.base import TraceSinks, create_backend
from netsim.backends.flow.fifo import FifoNet
from netsim.backends.flow.queueing import fifo_wait_ps
from netsim.records import ListSink
from netsim.topology import load_topology

RATE = 12.5e-3          # 100 Gb/s in bytes/ps
US = 1_000_000          # ps


class F:
    def __init__(self, fid, links):
        self.fid, self.links = fid, links


def _two_hop_net():
    # links: 0 = a->s1, 1 = b->s1 (senders), 2 = s1->s2, 3 = s2->d (two switch egresses)
    return FifoNet([RATE] * 4, [False, False, True, True], [28_000.0] * 4, lambda l: 1e12)


def test_wait_is_the_bytes_up_to_its_last_segment_then_every_queue_downstream():
    net = _two_hop_net()
    a, b = F(1, (0, 2, 3)), F(2, (1, 2, 3))
    net.attach(a)
    net.attach(b)
    q1, q2 = net.queues[2], net.queues[3]
    q1.segs.extend([[300.0, {1: 300.0}], [200.0, {2: 150.0, 1: 50.0}], [400.0, {1: 400.0}]])
    q1.q = 900.0
    q2.segs.append([250.0, {1: 250.0}])
    q2.q = 250.0
    # flow 2's last bytes are in the second segment of s1->s2: 500 bytes there, then all 250 of s2->d
    assert fifo_wait_ps(net, 2) == pytest.approx((500.0 + 250.0) / RATE)
    # flow 1's last bytes are at the tail of s1->s2 (this step's arrivals would be behind every segment)
    assert fifo_wait_ps(net, 1) == pytest.approx((900.0 + 250.0) / RATE)
    q1.arrivals = {1: 100.0}
    assert fifo_wait_ps(net, 1) == pytest.approx((1000.0 + 250.0) / RATE)


def test_no_wait_once_the_fifo_has_served_the_flow():
    net = _two_hop_net()
    a, b = F(1, (0, 2, 3)), F(2, (1, 2, 3))
    net.attach(a)
    net.attach(b)
    net.queues[3].segs.append([250.0, {1: 250.0}])
    net.queues[3].q = 250.0
    assert fifo_wait_ps(net, 2) == 0.0          # none of its bytes queued: the solve's completion stands
    assert fifo_wait_ps(net, 99) == 0.0          # not a flow of the FIFO


def _short_behind_long(backend):
    """Two 2 MB DCQCN flows into right0 keep a standing queue at its egress; 40 us later a 4 kB flow
    from a third sender joins it. Returns the short flow's FCT and ideal FCT (ns)."""
    g = load_topology("dumbbell:n_left=3,n_right=1")
    env = simpy.Environment()
    sink = ListSink()
    b = create_backend(backend, g, env=env, cc="dcqcn", cc_params={"dcqcn": {"preset": "hpcc"}},
                       sinks=TraceSinks(fct=sink), seed=1)

    def start(env, src, size, at_ns):
        yield env.timeout(at_ns * 1000)
        yield b.send(src, "right0", size)

    env.process(start(env, "left0", 2_000_000, 0))
    env.process(start(env, "left1", 2_000_000, 0))
    env.process(start(env, "left2", 4_000, 40_000))
    env.run()
    r = next(r for r in sink.rows if r.size_bytes == 4_000)
    return r.fct_ns, r.ideal_fct_ns


def test_short_flow_waits_behind_the_standing_queue_as_on_packet():
    """Before the FIFO wait the flow backend finished the short flow near its ideal FCT, while the
    packet backend queues it behind the two long flows' standing queue."""
    fct_flow, ideal = _short_behind_long("flow")
    fct_packet, _ = _short_behind_long("packet")
    assert fct_packet > 3 * ideal                     # the packet backend's short flow did queue
    assert fct_flow == pytest.approx(fct_packet, rel=0.1), (fct_flow, fct_packet, ideal)
