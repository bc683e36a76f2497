"""Seeded fuzzing of every input class through the real CLI (issue 15): no traceback, no hang, no
invalid input accepted, every rejection one stderr line with exit status 2.

The default run replays a fixed seed (a few hundred cases, well under 30 s); the slow run
(``-m slow``) draws many more from other seeds. A failure lists each bad case with its class,
what the mutator changed and the outcome; replay one with
``fuzzoracle.run_case(fuzzoracle.generate(SEED, N)[i], folder)``.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzzoracle  # noqa: E402

#: the default run: seed and number of cases (24 per input class)
SEED, CASES = 0, 24 * len(fuzzoracle.GENERATORS)
#: the slow run: more seeds, 150 cases per class each
SLOW_SEEDS, SLOW_CASES = (1, 2, 3), 150 * len(fuzzoracle.GENERATORS)


#: fuzz cases in the file readers' area (branch ``readers``, issue 15 §2: HPCC superscript digits and
#: huge headers, CSV fields over 128 KiB, a NUL byte in YAML) that still fail on this branch:
#: ``(class, label parts...)``.
#: They stay in the fuzzer: the default and slow runs leave them to :func:`test_fuzz_reader_gaps`,
#: which expects them to fail until the readers' fixes are merged; then delete the entries.
READER_GAPS = (("hpcc", "'100000000 3 10'"), ("hpcc", "'\u00b9"), ("raw-bytes", "longline bytes (300001)"),
               ("flow-csv", "tag of 200000 chars"), ("raw-bytes", "nul bytes", ".yaml"))


def _gap(case) -> bool:
    return any(case.cls == cls and all(p in case.label for p in parts) for cls, *parts in READER_GAPS)


def _check(results):
    bad = [r for r in results if fuzzoracle.is_bad(r)]
    assert not bad, f"{len(bad)} of {len(results)} fuzz cases misbehaved:\n" + "\n".join(
        fuzzoracle.describe(r) for r in bad)


def test_generators_are_seeded_and_cover_every_class():
    a, b = fuzzoracle.generate(SEED, 120), fuzzoracle.generate(SEED, 120)
    assert a == b
    assert fuzzoracle.generate(SEED + 1, 120) != a
    classes = {c.cls for c in a}
    assert classes == {"topology-values", "topology-trees", "graphml", "hpcc", "flow-csv", "builder",
                       "workload-values", "workload-trees", "flags", "sweep", "raw-bytes", "traffic"}
    assert all(any(c.invalid for c in a if c.cls == k) for k in classes)   # every class has invalid inputs


def test_oracle_flags_what_it_must(tmp_path):
    """The oracle itself: a valid case is ok, an invalid one clean, and a wrong label is caught."""
    ok = fuzzoracle.fuzzcases.Case("x", "valid", ("topo", "validate", "leaf_spine:leaves=2,spines=1"), (), False)
    bad = fuzzoracle.fuzzcases.Case("x", "bad", ("topo", "validate", "leaf_spine:leaves=nan"), (), True)
    lie = fuzzoracle.fuzzcases.Case("x", "lie", ok.argv, (), True)
    got = [fuzzoracle.run_case(c, str(tmp_path / c.label)).outcome for c in (ok, bad, lie)]
    assert got == ["ok", "clean", "accepted-invalid"]


def _run_without_gaps(seed: int, n: int, folder: str):
    picked = [(i, c) for i, c in enumerate(fuzzoracle.generate(seed, n)) if not _gap(c)]
    assert len(picked) > 0.9 * n
    return fuzzoracle.run_all([c for _, c in picked], folder, indices=[i for i, _ in picked])


def test_fuzz_default(tmp_path):
    _check(_run_without_gaps(SEED, CASES, str(tmp_path)))


def test_fuzz_reader_gaps(tmp_path):
    gaps = [(i, c) for i, c in enumerate(fuzzoracle.generate(SEED, CASES)) if _gap(c)]
    with fuzzoracle.fast_outputs():
        _check([fuzzoracle.run_case(c, str(tmp_path / f"g{i}"), i, timeout_s=3) for i, c in gaps])


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_fuzz_slow(tmp_path, seed):
    _check(_run_without_gaps(seed, SLOW_CASES, str(tmp_path)))
