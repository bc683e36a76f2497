"""Progress: silent unless stderr is a tty; same results whether shown or not."""
import io

import simpy

from netsim.progress import Progress, run_with_progress


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def _model(env, log):
    def proc(name, period):
        while True:
            yield env.timeout(period)
            log.append((env.now, name))
            if env.now >= 50_000:
                return
    for i, p in enumerate((7, 11, 13)):
        env.process(proc(f"p{i}", p))


def _run(stream, until=None, quiet=False, **kw):
    env = simpy.Environment()
    log = []
    _model(env, log)
    run_with_progress(env, until=until, quiet=quiet, stream=stream, label="t", **kw)
    return env.now, log


def test_silent_when_not_a_tty_or_quiet():
    s = io.StringIO()
    assert _run(s) == _run(None, quiet=True)
    assert s.getvalue() == ""
    t = FakeTTY()
    _run(t, quiet=True)
    assert t.getvalue() == ""


def test_identical_results_with_display(monkeypatch):
    plain = _run(io.StringIO())
    shown = _run(FakeTTY())
    assert shown == plain
    assert _run(FakeTTY(), until=20_000) == _run(io.StringIO(), until=20_000)
    assert _run(FakeTTY(), until=20_000)[0] == 20_000


def test_prints_on_a_tty():
    env = simpy.Environment()
    _model(env, [])
    t = FakeTTY()
    p = Progress(env, total_ps=100_000, stream=t, label="flows", interval_s=0.0, check_every=100)
    with p:
        p.run()
    out = t.getvalue()
    assert "\r" in out and "flows" in out and "ev/s" in out and out.endswith("\n")
    # every event counted: ceil(50000/period) timeouts per process + 3 Initialize + 3 process ends
    assert p.events == 7143 + 4546 + 3847 + 3 + 3
    assert "%" in p.line()


def test_eta_by_work():
    env = simpy.Environment()
    done = {"n": 0}
    p = Progress(env, work=lambda: done["n"], total_work=4, stream=FakeTTY()).start()
    p.events = 10
    done["n"] = 1
    assert "25%" in p.line() and "ETA" in p.line()
