"""Several jobs and background flows on one backend instance: the shared-network simulation.

Every job has its own :class:`netsim.runtime.executor.Executor`, started at the
job's start time on the same SimPy environment and the same backend (packet,
flow or analytic), so the jobs' flows meet in the network's queues (packet)
and max-min/CC rate shares (flow), exactly as one job's flows meet each other. Each executor stamps its job's name on every
flow's tag; a job with a traffic class sees the backend through a
:class:`JobView`, which sends its flows at that 802.1p priority (without one,
the transport's default). The analytic backend shares only each flow's
pacing link (the first lowest-rate link of its path), across jobs too, so
there jobs slow each other only where their flows share such a link. Background flows (:mod:`netsim.traffic.generate`) are sent
at their start times, tagged ``job=background``. The run ends when every job
has finished its iterations and every background flow has completed.

Left out: jobs that arrive or leave while others run as a scheduler would
place them (start times are given), and compute interference between jobs
(they never share a GPU).
"""
from __future__ import annotations

from collections import defaultdict

from ..errors import SimulationError
from ..records import EMPTY_TAG, FlowTag
from ..sinks import Sink
from ..units import PS_PER_NS
from .spec import BACKGROUND_JOB


class JobView:
    """The backend as a job with a traffic class sees it (a :class:`netsim.collectives.engine.Port`):
    ``send`` gives every flow that priority; the rest is the backend's, named here (no delegation)."""

    def __init__(self, backend, priority: int):
        self._backend, self._priority = backend, priority
        self.env, self.graph, self.name = backend.env, backend.graph, backend.name
        self.capabilities = backend.capabilities
        self.send_in_network = backend.send_in_network       # an in-network flow has no traffic class
        self.memo = None   # a job's collectives are always simulated: the memo replays the backend's own sends

    def send(self, src, dst, size_bytes, tag: FlowTag = EMPTY_TAG, *, cc=None, priority=None):
        return self._backend.send(src, dst, size_bytes, tag, cc=cc,
                                  priority=self._priority if priority is None else priority)

    def send_in_order(self, connection, src, dst, size_bytes, tag: FlowTag = EMPTY_TAG, *, in_network=False,
                      priority=None):
        """The backend's in-order send on ``connection``, at the job's class (an in-network flow has none)."""
        return self._backend.send_in_order(connection, src, dst, size_bytes, tag, in_network=in_network,
                                           priority=self._priority if priority is None else priority)

    def send_batch(self, transfers, on_done, keys=None, connections=None) -> None:
        """The backend's batch path does not take a priority: unroll into this view's :meth:`send` /
        :meth:`send_in_order` (the base backend's default), so every flow of the batch gets the job's class."""
        from ..backends.base import Backend
        Backend.send_batch(self, transfers, on_done, keys, connections)


class JobRows(Sink):
    """An ops sink that appends the job's name to every row."""

    def __init__(self, sink, job: str):
        self.sink, self.job = sink, job

    def add(self, row) -> None:
        self.sink.add((*row, self.job))


class FlowLedger(Sink):
    """The fct sink of a cluster run: rows (with the job appended) to ``out``, plus per-job tallies.

    :meth:`link_bytes` sums the bytes of each job's flows over every directed
    link of the path the backend routed them on (``router.path(src, dst,
    path_key)``, the call every backend makes), for the interference table.
    Bytes are summed per path while the run goes (one dict update per flow)
    and spread over the links at the end.
    """

    def __init__(self, out=None):
        self.out = out
        self.router = None
        self.path_bytes: dict[tuple, int] = defaultdict(int)
        self._unique: dict[tuple, tuple | None] = {}
        self.flows: dict[str, int] = defaultdict(int)
        self.bytes: dict[str, int] = defaultdict(int)
        self.background_fct_ns: list[int] = []
        self.count = 0

    def add(self, rec) -> None:
        self.count += 1
        job = rec.job
        self.flows[job] += 1
        self.bytes[job] += rec.size_bytes
        if job == BACKGROUND_JOB:
            self.background_fct_ns.append(rec.fct_ns)
        if self.router is not None and rec.src != rec.dst:
            pair = (rec.src, rec.dst)
            path = self._unique.get(pair, False)
            if path is False:
                path = self._unique[pair] = self.router.unique_path(*pair)
            if path is None:                        # several equal-cost routes: the flow's own
                path = self.router.path(rec.src, rec.dst, rec.path_key)
            self.path_bytes[(job, path)] += rec.size_bytes
        if self.out is not None:
            self.out.add((*rec.row(), job))

    def link_bytes(self) -> dict[str, dict]:
        """``{job: {(u, v): bytes}}`` over every directed link the job's flows crossed."""
        out: dict[str, dict] = defaultdict(lambda: defaultdict(int))
        for (job, path), b in self.path_bytes.items():
            lb = out[job]
            for u, v in zip(path[:-1], path[1:]):
                lb[(u, v)] += b
        return out

    def flush(self) -> None:
        if self.out is not None:
            self.out.flush()

    def close(self) -> None:
        if self.out is not None:
            self.out.close()


def _delayed(env, ex, iterations: int, delay_ps: int):
    if delay_ps:
        yield env.timeout(delay_ps)
    ex.start(iterations)
    yield ex.finished


def _background_sender(env, be, flows, priority):
    names = flows.hosts
    events = []
    for i, (s, d, b, t) in enumerate(zip(flows.src.tolist(), flows.dst.tolist(), flows.size_bytes.tolist(),
                                         flows.start_ns.tolist())):
        at = int(t) * PS_PER_NS
        if at > env.now:
            yield env.timeout(at - env.now)
        # each background flow is its own connection: keyed by its row, as a flow file's (netsim.network.flowkey)
        tag = FlowTag(tag=flows.tag, job=BACKGROUND_JOB, row=i)
        events.append(be.send(names[s], names[d], int(b), tag, priority=priority))
    if events:
        yield env.all_of(events)


def _effects(be, job, seed: int):
    """The job's op builder with its workload's compute variability, and its overlap model (or None),
    as :func:`netsim.runtime.run_training` installs them (one model per job: ranks are per job)."""
    from ..runtime.variability import resolve_overlap, resolve_variability
    builder, overlap = job.builder, None
    variability = resolve_variability(job.workload, None)
    if variability is not None:
        from ..runtime.variability import VariabilityBuilder
        builder = VariabilityBuilder(builder, variability, job.seed, job.placement.world_size)
    from ..runtime.overlap import overlap_model
    overlap = overlap_model(be.env, resolve_overlap(job.workload, None), job.workload)
    return builder, overlap


def run_shared(be, graph, jobs, *, ops_sink=None, background=None, background_priority=None,
               seed: int = 0, progress: bool = False) -> dict:
    """Run ``jobs`` (:class:`netsim.cluster.jobs.BuiltJob`) and ``background`` flows on backend ``be``.

    Returns ``{job name: Executor}`` once every job finished and every background flow completed;
    ``progress`` draws :class:`netsim.progress.Progress`'s line (ops done) on a terminal. Raises :class:`~netsim.errors.SimulationError` when the network stops before that (a deadlock).
    """
    from ..runtime.job import hierarchical_grouper
    from ..runtime.executor import Executor
    env = be.env
    executors, procs = {}, []
    for job in jobs:
        view = be if job.spec.traffic_class is None else JobView(be, job.spec.traffic_class)
        rows = JobRows(ops_sink, job.name) if ops_sink is not None else None
        builder, overlap = _effects(be, job, seed)
        ex = Executor(view, builder, job.placement.gpu_of,
                      node_groups=hierarchical_grouper(job.workload, job.placement, graph),
                      ops_sink=rows, tag=job.workload.name, progress=False, job=job.name, overlap=overlap)
        executors[job.name] = ex
        procs.append(env.process(_delayed(env, ex, job.spec.iterations, job.spec.start_ns * PS_PER_NS)))
    if background is not None and len(background):
        procs.append(env.process(_background_sender(env, be, background, background_priority)))
    from ..progress import Progress
    prog = Progress(env, quiet=not progress, label=f"netsim run (cluster of {len(jobs)} jobs)",
                    work=lambda: sum(ex._done_ops for ex in executors.values()))
    try:
        with prog:                        # also tunes the garbage collector, as a single-job run does
            prog.run(env.all_of(procs))
    except RuntimeError as exc:           # simpy: no events left before every job finished
        for ex in executors.values():
            if ex.finished is not None:           # started (a job not yet started has nothing stuck)
                ex.check_complete()
        raise SimulationError(f"cluster simulation stopped early: {exc}") from None
    for ex in executors.values():
        ex.check_complete()
    return executors
