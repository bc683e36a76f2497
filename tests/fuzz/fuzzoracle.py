"""The fuzz oracle: run each :class:`~fuzzcases.Case` through the real CLI and classify the outcome.

A case runs ``netsim.cli.main(argv)`` in this process (fast: imports are paid
once) under a SIGALRM timeout. Outcomes:

* ``ok`` — exit 0; ``clean`` — exit 2 with exactly one stderr line and no traceback;
* bad: ``accepted-invalid`` (exit 0 on an input the mutator knows is invalid),
  ``rejected-valid`` (a known-valid input did not run), ``traceback`` (an
  exception escaped, or a traceback was printed), ``multi-line`` (exit 2 with
  other than one line), ``warning`` (a Python warning reached the user),
  ``hang`` (over the timeout, twice), ``exit-N`` (any other exit status).

Left out: the Parquet copies (``netsim.analysis.io.write_parquet``) are
switched off while fuzzing — they only re-read CSVs the run already wrote and
would cost ~0.3 s per valid case.

Run by hand for a tally: ``python tests/fuzz/fuzzoracle.py --cases 2000 --seed 1``.
"""
from __future__ import annotations

import contextlib
import io
import os
import random
import signal
import sys
import warnings
from collections import Counter
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzzcases  # noqa: E402
import fuzzflags  # noqa: E402

#: one generator per input class of issue 15, in a fixed order (round robin over cases)
GENERATORS = (fuzzcases.topo_values, fuzzcases.topo_trees, fuzzcases.graphml, fuzzcases.hpcc, fuzzcases.flow_csv,
              fuzzflags.builder_expr, fuzzflags.workload_values, fuzzflags.workload_trees, fuzzflags.flags,
              fuzzflags.sweep, fuzzcases.raw_bytes, fuzzflags.traffic)
BAD = ("accepted-invalid", "rejected-valid", "traceback", "multi-line", "warning", "hang")
#: seconds one case may take; a valid case needs milliseconds, an error much less
TIMEOUT_S = 20


@dataclass(frozen=True)
class Result:
    """What one case did: ``outcome`` (see the module docstring), exit status and stderr's last line."""

    case: fuzzcases.Case
    index: int
    outcome: str
    rc: object
    line: str


def generate(seed: int, n: int) -> list[fuzzcases.Case]:
    """``n`` cases; case ``i`` depends only on ``(seed, i)``, so any one can be replayed alone."""
    return [GENERATORS[i % len(GENERATORS)](random.Random(f"{seed}:{i}")) for i in range(n)]


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` in netsim swallows it."""


def _alarm(signum, frame):
    raise _Timeout()


def run_case(case: fuzzcases.Case, folder: str, index: int = 0, timeout_s: float = TIMEOUT_S) -> Result:
    """Write the case's files into ``folder``, run it, classify it; a case over the timeout is run
    once more before it counts as a hang (a loaded machine can stall any process for seconds)."""
    first = _run_once(case, folder, index, timeout_s)
    return first if first.outcome != "hang" else _run_once(case, folder + "-again", index, timeout_s)


def _run_once(case: fuzzcases.Case, folder: str, index: int, timeout_s: float) -> Result:
    from netsim.cli import main
    os.makedirs(folder, exist_ok=True)
    for name, data in case.files:
        with open(os.path.join(folder, name), "wb") as fh:
            fh.write(data.replace(b"{d}", folder.encode()))
    argv = [a.replace("{d}", folder) for a in case.argv]
    err, out = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    rc, crashed, caught = None, None, []
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                rc = main(argv)
            except SystemExit as exc:   # argparse
                rc = exc.code
    except _Timeout:
        rc = "hang"
    except BaseException as exc:  # noqa: BLE001 - the point is to see it
        crashed = f"{type(exc).__name__}: {str(exc)[:120]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
    last = crashed or (lines[-1][:300] if lines else "")
    user_warnings = [w for w in caught if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    if rc == "hang":
        outcome = "hang"
    elif crashed or "Traceback" in err.getvalue():
        outcome = "traceback"
    elif rc == 0:
        outcome = "accepted-invalid" if case.invalid else ("warning" if user_warnings else "ok")
        if user_warnings:
            last = f"{user_warnings[0].category.__name__}: {str(user_warnings[0].message)[:120]}"
    elif rc == 2:
        outcome = "rejected-valid" if case.invalid is False else ("clean" if len(lines) == 1 else "multi-line")
    else:
        outcome = f"exit-{rc}"
    return Result(case, index, outcome, rc, last)


@contextlib.contextmanager
def fast_outputs():
    """Parquet copies off while fuzzing (see the module docstring)."""
    import netsim.analysis.io as aio
    saved = aio.write_parquet
    aio.write_parquet = lambda out_dir, *a, **k: []
    try:
        yield
    finally:
        aio.write_parquet = saved


def run_all(cases, root: str, timeout_s: float = TIMEOUT_S, indices=None) -> list[Result]:
    """Run ``cases`` (``indices``: their numbers in :func:`generate`'s list, for replaying)."""
    indices = list(indices) if indices is not None else list(range(len(cases)))
    with fast_outputs():
        return [run_case(c, os.path.join(root, f"c{i}"), i, timeout_s) for i, c in zip(indices, cases)]


def is_bad(r: Result) -> bool:
    return r.outcome in BAD or r.outcome.startswith("exit-")


def tally(results) -> dict:
    """Counts for the report: cases, outcomes, and the share of known-invalid cases that exit 2 cleanly."""
    outcomes = Counter(r.outcome for r in results)
    invalid = [r for r in results if r.case.invalid]
    clean = sum(r.outcome == "clean" for r in invalid)
    return {"cases": len(results), "invalid": len(invalid), "outcomes": dict(sorted(outcomes.items())),
            "clean_exit2_pct_of_invalid": round(100.0 * clean / len(invalid), 1) if invalid else 100.0,
            "by_class": {cls: dict(Counter(r.outcome for r in results if r.case.cls == cls))
                         for cls in sorted({r.case.cls for r in results})}}


def describe(r: Result) -> str:
    return f"#{r.index} [{r.case.cls}] {r.case.label!r}: {r.outcome} (rc={r.rc}) {r.line}"


if __name__ == "__main__":  # pragma: no cover - a tool for the report
    import argparse
    import json
    import tempfile
    ap = argparse.ArgumentParser(description="run the netsim fuzz suite and print a tally")
    ap.add_argument("--cases", type=int, default=330)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true", help="list every bad case")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per case before it counts as a hang")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        res = run_all(generate(a.seed, a.cases), tmp, a.timeout)
    print(json.dumps(tally(res), indent=1))
    if a.show:
        for r in res:
            if is_bad(r):
                print(describe(r))
