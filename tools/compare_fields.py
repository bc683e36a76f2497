"""Field-level comparison of two example runs (``compare_examples.py fields DIR_A DIR_B``).

Where ``compare_examples.py diff`` says which files differ, this says how:
per case present in both folders, the files identical, only in A, only in B
and differing, then for each differing file

- CSV: columns added and removed, row counts, and for every common column
  whether it is equal; a numeric column that is not is given its largest
  absolute and relative difference, any other its count of differing rows
  and a first example. Rows are matched by a key column where the file has
  one (``flow_id``; ``rank, iteration, op`` of ``ops.csv``; ``iteration, src,
  dst`` of ``traffic_matrix.csv``), unique in both files, else in order;
- JSON: keys added and removed, scalar values changed (old -> new, with the
  relative change of numbers), at any depth (list items by index), wall-clock
  measurements left out as ``diff`` does; a list longer than ``LONG_LIST``
  (trace.json's events) is compared as a multiset of items instead: lengths and
  how many items of each side the other lacks;
- other text: line counts and the first differing line.

Parquet copies are skipped (their CSV originals are compared). Long lists are
cut at ``MAX_ITEMS`` entries with a count of the rest. Nothing is modelled
here; the tool reads finished runs only.
"""
from __future__ import annotations

import csv
import json
import math
import os
from collections import Counter

MAX_ITEMS = 12
LONG_LIST = 100
KEYS = (("flow_id",), ("rank", "iteration", "op"), ("iteration", "src", "dst"))


def drop_walls(obj):
    """``obj`` without wall-clock measurements (keys ending in ``wall_s`` / ``wall_time_s``, at any depth)."""
    if isinstance(obj, dict):
        return {k: drop_walls(v) for k, v in obj.items() if not str(k).endswith(("wall_s", "wall_time_s"))}
    if isinstance(obj, list):
        return [drop_walls(v) for v in obj]
    return obj


def _cut(items: list[str]) -> str:
    """Comma-joined ``items``, at most ``MAX_ITEMS`` of them and a count of the rest."""
    more = f" (+{len(items) - MAX_ITEMS} more)" if len(items) > MAX_ITEMS else ""
    return ", ".join(items[:MAX_ITEMS]) + more


def _num(s):
    """``s`` as a float, or None when it is not a finite-or-infinite number."""
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _rel(a: float, b: float) -> float:
    """Relative change of ``b`` against ``a`` (inf when ``a`` is 0 and ``b`` is not)."""
    if a == b:
        return 0.0
    return abs(b - a) / abs(a) if a else math.inf


def _read_csv(path: str) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return (rows[0], rows[1:]) if rows else ([], [])


def _pair_rows(ha, ra, hb, rb):
    """Matched ``(row_a, row_b)`` pairs, a description of the matching, rows only in A, only in B."""
    for key in KEYS:
        if all(k in ha and k in hb for k in key):
            ia, ib = [ha.index(k) for k in key], [hb.index(k) for k in key]
            da = {tuple(r[i] for i in ia): r for r in ra}
            db = {tuple(r[i] for i in ib): r for r in rb}
            if len(da) == len(ra) and len(db) == len(rb):
                pairs = [(da[k], db[k]) for k in da if k in db]
                return pairs, "by " + ", ".join(key), len(set(da) - set(db)), len(set(db) - set(da))
    n = min(len(ra), len(rb))
    return list(zip(ra[:n], rb[:n])), "in order", len(ra) - n, len(rb) - n


def _column(name: str, va: list[str], vb: list[str]) -> str | None:
    """One line on a common column's differences, None when it is equal."""
    bad = [(x, y) for x, y in zip(va, vb) if x != y]
    if not bad:
        return None
    nums = [(_num(x), _num(y)) for x, y in bad]
    if all(x is not None and y is not None for x, y in nums):
        ab = max(abs(y - x) for x, y in nums)
        rel = max(_rel(x, y) for x, y in nums)
        return f"{name}: max abs {ab:.6g}, max rel {rel:.3g} ({len(bad)} of {len(va)} rows differ)"
    return f"{name}: {len(bad)} of {len(va)} rows differ (e.g. {bad[0][0]!r} -> {bad[0][1]!r})"


def csv_report(pa: str, pb: str) -> list[str]:
    """Lines describing how CSV file ``pb`` differs from ``pa``."""
    ha, ra = _read_csv(pa)
    hb, rb = _read_csv(pb)
    added = [c for c in hb if c not in ha]
    removed = [c for c in ha if c not in hb]
    pairs, how, only_a, only_b = _pair_rows(ha, ra, hb, rb)
    head = f"rows {len(ra)} -> {len(rb)} (matched {how}"
    head += f"; {only_a} only in A, {only_b} only in B)" if only_a or only_b else ")"
    out = [head]
    if added:
        out.append("+columns " + _cut(added))
    if removed:
        out.append("-columns " + _cut(removed))
    equal = 0
    for c in (c for c in ha if c in hb):
        ia, ib = ha.index(c), hb.index(c)
        line = _column(c, [p[0][ia] for p in pairs], [p[1][ib] for p in pairs])
        if line is None:
            equal += 1
        else:
            out.append(line)
    out.append(f"{equal} common column(s) equal")
    return out


def flatten(obj, prefix: str = "") -> dict[str, object]:
    """Scalars of a JSON value by path (``a.b[0].c``); an empty or long (> ``LONG_LIST``) list is a scalar."""
    if isinstance(obj, dict) and obj:
        out = {}
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(obj, list) and 0 < len(obj) <= LONG_LIST:
        out = {}
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: obj}


def _multiset(old: list, new: list) -> str:
    """Two long lists as multisets of items: lengths and the items each lacks of the other."""
    ca, cb = Counter(json.dumps(v, sort_keys=True) for v in old), Counter(json.dumps(v, sort_keys=True) for v in new)
    only_a, only_b = sum((ca - cb).values()), sum((cb - ca).values())
    if not (only_a or only_b):
        return f"{len(old)} items each, the same ones in another order"
    return f"{len(old)} -> {len(new)} items, {only_a} of A's not in B, {only_b} of B's not in A"


def _change(old, new) -> str:
    if isinstance(old, list) and isinstance(new, list) and max(len(old), len(new)) > LONG_LIST:
        return _multiset(old, new)
    rel = ""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (old, new)):
        r = _rel(float(old), float(new))
        rel = f" ({'+' if new > old else '-'}{r:.3g})" if math.isfinite(r) else " (from 0)"
    return f"{old!r} -> {new!r}{rel}"


def json_report(pa: str, pb: str) -> list[str]:
    """Lines describing how JSON file ``pb`` differs from ``pa`` (walls left out)."""
    with open(pa, encoding="utf-8") as fa, open(pb, encoding="utf-8") as fb:
        a, b = flatten(drop_walls(json.load(fa))), flatten(drop_walls(json.load(fb)))
    out = []
    added = [k for k in b if k not in a]
    removed = [k for k in a if k not in b]
    changed = [k for k in a if k in b and a[k] != b[k]]
    if added:
        out.append(f"+keys ({len(added)}) " + _cut(added))
    if removed:
        out.append(f"-keys ({len(removed)}) " + _cut(removed))
    if changed:
        out.append(f"changed ({len(changed)}): " + _cut([f"{k} {_change(a[k], b[k])}" for k in changed]))
    return out or ["equal after leaving out walls"]


def text_report(pa: str, pb: str) -> list[str]:
    """Line counts and the first differing line of two text files."""
    with open(pa, encoding="utf-8", errors="replace") as fa, open(pb, encoding="utf-8", errors="replace") as fb:
        la, lb = fa.read().splitlines(), fb.read().splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return [f"lines {len(la)} -> {len(lb)}; first differing line {i + 1}: {x[:100]!r} -> {y[:100]!r}"]
    return [f"lines {len(la)} -> {len(lb)}; the shorter is a prefix of the longer"]


def file_report(pa: str, pb: str) -> list[str]:
    """How ``pb`` differs from ``pa``, by the file's kind (a JSON that does not parse is text)."""
    if pa.endswith(".csv"):
        return csv_report(pa, pb)
    if pa.endswith(".json"):
        try:
            return json_report(pa, pb)
        except ValueError:
            pass
    return text_report(pa, pb)


def fields(a: str, b: str, same) -> int:
    """Print the per-case field report of run folders ``a`` and ``b``; 1 if anything differs.

    ``same(pa, pb)`` says whether two files are equal as ``diff`` compares them.
    """
    bad = 0
    for case in sorted(set(os.listdir(a)) & set(os.listdir(b))):
        fa, fb = os.path.join(a, case), os.path.join(b, case)
        if not (os.path.isdir(fa) and os.path.isdir(fb)):
            continue
        na = {n for n in os.listdir(fa) if not n.endswith(".parquet")}
        nb = {n for n in os.listdir(fb) if not n.endswith(".parquet")}
        common = sorted(na & nb)
        differ = [n for n in common if not same(os.path.join(fa, n), os.path.join(fb, n))]
        only_a, only_b = sorted(na - nb), sorted(nb - na)
        print(f"== {case}: {len(common) - len(differ)} identical, {len(only_a)} only in A, "
              f"{len(only_b)} only in B, {len(differ)} differing")
        for label, names in (("only in A", only_a), ("only in B", only_b)):
            if names:
                print(f"  {label}: {', '.join(names)}")
        for n in differ:
            print(f"  {n}:")
            for line in file_report(os.path.join(fa, n), os.path.join(fb, n)):
                print(f"    {line}")
        bad += len(differ) + len(only_a) + len(only_b)
    print(f"{bad} differing file(s)")
    return 1 if bad else 0
