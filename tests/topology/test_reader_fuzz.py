"""A seeded mutation fuzzer over the file readers (issue 15 §2): never a traceback, never two lines.

Each shipped input (YAML, GraphML and HPCC topologies, CSV and HPCC flow
files) is mutated by a seeded random generator — characters replaced by
hostile ones (superscript and Arabic-Indic digits, NUL, signs, huge
exponents, quotes, brackets), lines duplicated, dropped or cut, numbers
blown up — and read through the real CLI (``topo validate``; ``flows
--backend analytic`` for flow files). Every outcome must be exit 0, or exit 2
with exactly one stderr line and no traceback. The default run tries
:data:`FAST_CASES` mutants per file; ``-m slow`` tries :data:`SLOW_CASES`.
"""
from __future__ import annotations

import os
import random

import pytest

from netsim.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPO = os.path.join(ROOT, "topologies")
HPCC = os.path.join(TOPO, "hpcc_small")
FAST_CASES = 12
SLOW_CASES = 300
#: what a mutation may insert: digits ``int`` rejects or accepts oddly, control bytes, YAML/CSV syntax
HOSTILE = ["\u00b9", "\u0663", "\x00", "-", "+", "e999", "1e400", "nan", "inf", "9" * 40, "'", '"', "[", "{",
           ":", ",", "#", "\t", "\r", " ", "", "0", "-1", ".", "_", "\ufeff", "\u00b5s", "Gbps", "KiB", "&a", "*a"]
SEEDS = {"dumbbell.yaml": 1, "leaf_spine_hosts.yaml": 2, "fat_tree_k4.graphml": 3, "topology.txt": 4,
         "flow.txt": 5, "flows.csv": 6}


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        i = rng.randrange(len(lines))
        if op < 0.5 and lines[i]:
            j = rng.randrange(len(lines[i]))
            k = min(len(lines[i]), j + rng.randint(1, 4))
            lines[i] = lines[i][:j] + rng.choice(HOSTILE) + lines[i][k:]
        elif op < 0.65:
            lines.insert(i, lines[i])
        elif op < 0.8 and len(lines) > 1:
            del lines[i]
        elif op < 0.9:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        else:  # blow up a number
            words = lines[i].split(" ")
            idx = [n for n, w in enumerate(words) if w[:1].isdigit()]
            if idx:
                words[rng.choice(idx)] = rng.choice(["100000000", "9007199254740993", "0", "1" * 25])
                lines[i] = " ".join(words)
    return "\n".join(lines)


def _inputs(tmp_path):
    flows_csv = "src,dst,size_bytes,start_ns,tag,cc,priority\nleft0,right0,100KB,0,a,dcqcn,3\n" \
                "left1,right1,64KiB,10us,b,,\n"
    with open(os.path.join(TOPO, "dumbbell.yaml"), encoding="utf-8") as fh:
        yield "dumbbell.yaml", fh.read()
    with open(os.path.join(TOPO, "leaf_spine_hosts.yaml"), encoding="utf-8") as fh:
        yield "leaf_spine_hosts.yaml", fh.read()
    with open(os.path.join(TOPO, "fat_tree_k4.graphml"), encoding="utf-8") as fh:
        yield "fat_tree_k4.graphml", fh.read()
    with open(os.path.join(HPCC, "topology.txt"), encoding="utf-8") as fh:
        yield "topology.txt", fh.read()
    with open(os.path.join(HPCC, "flow.txt"), encoding="utf-8") as fh:
        yield "flow.txt", fh.read()
    yield "flows.csv", flows_csv


def _argv(name: str, path: str, out: str) -> list:
    if name == "flow.txt":
        return ["flows", os.path.join(HPCC, "topology.txt"), path, "--out", out, "--backend", "analytic",
                "--quiet", "--no-trace"]
    if name == "flows.csv":
        return ["flows", os.path.join(TOPO, "dumbbell.yaml"), path, "--out", out, "--backend", "analytic",
                "--quiet", "--no-trace"]
    return ["topo", "validate", path]


def _fuzz(tmp_path, capsys, name: str, text: str, cases: int) -> None:
    rng = random.Random(SEEDS[name])
    for case in range(cases):
        mutant = _mutate(text, rng)
        d = tmp_path / f"{case}"
        d.mkdir()
        path = d / name
        path.write_bytes(mutant.encode("utf-8", "surrogatepass"))
        argv = _argv(name, str(path), str(d / "out"))
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse
            rc = exc.code
        err = capsys.readouterr().err
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("netsim: note:")]
        assert "Traceback" not in err, (case, mutant, err)
        assert rc in (0, 2), (case, rc, err)
        if rc == 2:
            assert len(lines) == 1, (case, mutant, err)


@pytest.mark.parametrize("name", list(SEEDS))
def test_fuzz_readers(tmp_path, capsys, name):
    text = dict(_inputs(tmp_path))[name]
    _fuzz(tmp_path, capsys, name, text, FAST_CASES)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SEEDS))
def test_fuzz_readers_long(tmp_path, capsys, name):
    text = dict(_inputs(tmp_path))[name]
    _fuzz(tmp_path, capsys, name, text, SLOW_CASES)
