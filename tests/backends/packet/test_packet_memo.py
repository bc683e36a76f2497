"""Exact memoisation of repeated collectives on the packet backend (``--memo on``, netsim.backends.packet.memo).

Every check is an exact equality with the same run simulated with the memo off: the flow records (every
fct.csv column), the backend's counters (summary.json ``network`` but its event count), the ports' random
streams; and the event count falls by the factor the number of simulated steps says.
"""
from __future__ import annotations

import os

import pytest
import simpy

from netsim.backends.base import TraceSinks
from netsim.backends.packet.backend import PacketBackend
from netsim.cli import main
from netsim.collectives.api import run_collective
from netsim.errors import InputError
from netsim.records import ListSink

from pkt_helpers import star

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HOSTS = [f"h{i}" for i in range(8)]
GAP_PS = 1_234_567_000          # between two steps: 1.234567 ms, longer than any step's tail


def _steps(memo, cc="dctcp", n=4, size=2 * 2**20, algorithm="ring", kind="allreduce", params=None, outside=None,
           after=None, sizes=None, graph=None, hosts=HOSTS):
    """``n`` collectives on 8 hosts of one switch, each ``GAP_PS`` after the previous one's end.

    ``outside = (i, fn)``: process ``fn(env, be)`` starts just before step ``i`` (someone else's traffic);
    ``after = (i, fn)``: ``fn(be)`` is called as step ``i`` ends. Returns (backend, fct rows, stats, stream states)."""
    env = simpy.Environment()
    be = PacketBackend(star(8) if graph is None else graph, env=env, params={"memo": memo, **(params or {})}, seed=0, cc=cc, cc_params={},
                       sinks=TraceSinks(fct=ListSink()))

    def driver(env):
        for i in range(n):
            if outside is not None and outside[0] == i:
                env.process(outside[1](env, be))
            yield run_collective(be, kind, hosts, size, algorithm=algorithm, sizes=sizes)
            if after is not None and after[0] == i:
                after[1](be)
            yield env.timeout(GAP_PS)

    env.process(driver(env))
    env.run()
    return be, be.sink.rows, be.stats(), [p.rng.getstate() for p in be.net.ports.values()]


def _same(off, on):
    """Memo on reproduces memo off: rows, counters (not the event count), streams."""
    assert on[1] == off[1] and len(off[1]) > 0
    s_off, s_on = dict(off[2]), dict(on[2])
    for s in (s_off, s_on):
        s.pop("events")
        s.pop("memo", None)
    assert s_on == s_off
    assert on[3] == off[3]


@pytest.mark.parametrize("cc", ["dctcp", "dcqcn"])
@pytest.mark.parametrize("algorithm", ["ring", "halving_doubling"])
def test_repeated_collectives_replay_byte_identically_with_fewer_events(cc, algorithm):
    """4 steps: the first two are simulated (the first starts from a network that never carried a packet, so
    the second's start state differs), the last two replayed; everything equals the run with the memo off,
    and events fall by n / 2 (the replayed steps' own events: one per completion instant)."""
    n = 4
    off, on = _steps(False, cc, n, algorithm=algorithm), _steps(True, cc, n, algorithm=algorithm)
    _same(off, on)
    m = on[2]["memo"]
    assert (m["hits"], m["misses"], m["stored"]) == (n - 2, 2, 2)
    assert m["miss_reasons"] == {"first of its kind": 1, "start state differs (ports or random streams)": 1}
    assert m["skipped_packet_hops"] == (n - 2) * off[2]["packet_hops"] // n
    ratio = off[2]["events"] / on[2]["events"]
    assert abs(ratio / (n / 2) - 1) < 0.02, ratio


def test_the_host_stack_model_replays_too():
    """With the host-stack cost (netsim run's default: per-message delay, TCP's per-connection cap) the
    replayed steps equal the simulated ones as well (the cost is a function of the path and algorithm)."""
    off = _steps(False, "dctcp", 3, params={"host_stack": True})
    on = _steps(True, "dctcp", 3, params={"host_stack": True})
    _same(off, on)
    assert off[0].host_stack is not None and on[2]["memo"]["hits"] == 1


def test_a_step_whose_red_marking_drew_is_never_replayed():
    """DCQCN with RED between 1 KB and 1 MB on an all-to-all that is a 7 -> 1 incast of 1 MB (a queue at the
    switch's port to h0): every step draws from that port's stream, so no step starts in a stored state; the
    run equals the memo-off run."""
    params = {"ecn_kmin_bytes": 1000, "ecn_kmax_bytes": 1_000_000, "ecn_pmax": 0.5}
    sizes = [[0] * 8] + [[2**20] + [0] * 7 for _ in range(7)]
    kw = dict(size=0, algorithm="direct", kind="alltoall", params=params, sizes=sizes)
    off, on = _steps(False, "dcqcn", 3, **kw), _steps(True, "dcqcn", 3, **kw)
    _same(off, on)
    assert off[2]["ecn_marks"] > 0
    m = on[2]["memo"]
    assert m["hits"] == 0 and m["misses"] == 3 and m["stored"] == 3
    assert m["miss_reasons"]["start state differs (ports or random streams)"] == 2


def test_an_outside_send_during_a_step_is_not_replayed_over():
    """Someone else sends 100 us into step 3 (a flow h0 -> h4 of 1 MB): step 3 is simulated with it (its
    timer is pending when step 3 starts), step 4 replays step 2; all equal to the memo-off run."""
    def other(env, be):
        yield env.timeout(100_000_000)
        yield be.send("h0", "h4", 2**20)

    off, on = _steps(False, n=4, outside=(2, other)), _steps(True, n=4, outside=(2, other))
    _same(off, on)
    m = on[2]["memo"]
    assert m["miss_reasons"].get("another event pending before it would end") == 1
    assert m["hits"] == 1


def test_a_send_where_a_replayed_step_still_has_packets_in_flight_stops_the_run():
    """A flow started the instant replayed step 3 ends, on its hosts (whose last ACKs are still on the wire):
    the replay cannot go on exactly, so the run stops with a one-line InputError naming --memo. (A step whose
    caller sends in its tail is never stored: with the send after every step nothing replays.)"""
    def send(be):
        be.send("h0", "h1", 4096)

    with pytest.raises(InputError, match="--memo on.*last packets are still in flight"):
        _steps(True, n=4, after=(2, send))
    _steps(False, n=4, after=(2, send))      # the memo-off run is fine


def test_a_send_away_from_a_replayed_steps_last_packets_goes_on_exactly():
    """Two leaves under one spine: the steps run on leaf0's hosts; the instant replayed step 3 ends, h4 sends
    to h5 under leaf1 (no node of its path carries the step's last packets): the run goes on, equal to the
    memo-off run."""
    from netsim.topology import build_expression
    sends = []

    def send(be):
        sends.append(be.send("h4", "h5", 2**20))

    kw = dict(n=4, graph=build_expression("leaf_spine:leaves=2,spines=1,hosts_per_leaf=4"),
              hosts=["h0", "h1", "h2", "h3"], after=(2, send))
    off, on = _steps(False, **kw), _steps(True, **kw)
    _same(off, on)
    assert on[2]["memo"]["hits"] == 2 and len(sends) == 2      # one in each run


def test_memo_off_leaves_the_backend_untouched():
    """Without the memo the backend's send and completion hooks are the class's own and there is no memo."""
    be = PacketBackend(star(2), env=simpy.Environment(), params={}, seed=0, cc="none", cc_params={},
                       sinks=TraceSinks())
    assert be.memo is None and "send" not in vars(be) and be.net.flow_received == be._received


@pytest.mark.parametrize("argv, needle", [
    (["--backend", "flow", "--memo", "on"], "--memo: not supported by the flow backend"),
    (["--memo", "on", "--fast-forward", "on"], "--memo: cannot be combined with --fast-forward on"),
    (["--memo", "yes"], "--memo: bad value (got 'yes'); expected on or off"),
    (["--memo", "on", "--set", "memo=off"], "--memo: given twice"),
])
def test_bad_memo_options_exit_2_with_one_line(tmp_path, capsys, argv, needle):
    rc = main(["run", "gpu_cluster:servers=2,gpus_per_server=4",
               os.path.join(ROOT, "workloads", "gpt-1.5b-t2p2d2-small.yaml"), "--out", str(tmp_path / "o"),
               "--quiet", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and needle in err[0], err
